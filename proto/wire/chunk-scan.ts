// The fast path for the one message that carries data at rate, UpstreamChunk (enc=proto). It checks the
// bytes and finds each group's data points without creating an object per point: a group keeps its
// DataPoint entries as one span of the received frame, which storage re-tags into StoreDataChunk bytes
// (the two DataPoint messages are the same: sint64 elapsed_time = 1, bytes payload = 2) and a downstream
// decodes only when one is listening. A message outside the plain shape (unknown or repeated fields,
// points interleaved with other fields) gives undefined: the caller then decodes it with protobufjs,
// which keeps its exact semantics, errors included.
import { iscp2 } from "../gen/iscp.js";

export interface RawDataId {
  name: string;
  type: string;
}

/** One DataPointGroup: its data id (or alias) and its points as the `data_points` entries received. */
export class RawPointGroup {
  private decoded: iscp2.IDataPoint[] | undefined;

  constructor(
    readonly dataId: RawDataId | undefined,
    readonly dataIdAlias: number,
    readonly count: number,
    /** The group's `data_points` entries back to back, each `0x1a, length, DataPoint` (a view into the frame). */
    readonly raw: Uint8Array,
    readonly payloadBytes: number,
    /** Smallest and largest elapsed time, clamped to ±(2^53 - 1). */
    readonly minElapsed: number,
    readonly maxElapsed: number,
  ) {}

  /** Calls `fn` with each point's payload (a view into the frame), in order, until it returns false. */
  eachPayload(fn: (payload: Uint8Array) => boolean | void): void {
    const s = new Scan(this.raw);
    while (s.pos < this.raw.length) {
      s.pos++; // the data_points tag
      s.dataPoint();
      if (fn(this.raw.subarray(s.payloadStart, s.payloadEnd)) === false) return;
    }
  }

  /** The points as protobufjs objects, decoded on first use (downstream relay, JSON clients). */
  get dataPoints(): iscp2.IDataPoint[] {
    // The entries alone are a valid DataPointGroup message holding only data_points.
    this.decoded ??= iscp2.DataPointGroup.decode(this.raw).dataPoints;
    return this.decoded;
  }
}

export interface ScannedUpstreamChunk {
  streamIdAlias: number;
  sequenceNumber: number;
  dataIds: RawDataId[];
  groups: RawPointGroup[];
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Message.upstream_chunk = 70, length-delimited: tag varint 562. */
const UPSTREAM_CHUNK_TAG = [0xb2, 0x04] as const;

/** Thrown inside the scan for anything off the fast path; never escapes scanUpstreamChunkMessage. */
class OffPath extends Error {}
const OFF = new OffPath();

class Scan {
  pos = 0;
  constructor(readonly b: Uint8Array) {}

  /** A varint that must fit in 32 bits (lengths, uint32 fields). */
  u32(): number {
    const b = this.b;
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= b.length) throw OFF;
      const x = b[this.pos++]!;
      v += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) {
        if (v > 0xffffffff) throw OFF;
        return v;
      }
    }
    throw OFF;
  }

  /**
   * A sint64 (ZigZag) varint as a number, clamped to ±(2^53 - 1). Runs per data point: up to 7 bytes
   * (|n| < 2^48 ns, three days) take the unrolled path; longer ones the exact loop.
   */
  sint64(): number {
    const b = this.b;
    let p = this.pos;
    let x = b[p++]!;
    let lo = x & 0x7f;
    let hi = 0;
    if (x >= 0x80) {
      x = b[p++]!;
      lo |= (x & 0x7f) << 7;
      if (x >= 0x80) {
        x = b[p++]!;
        lo |= (x & 0x7f) << 14;
        if (x >= 0x80) {
          x = b[p++]!;
          lo |= (x & 0x7f) << 21;
          if (x >= 0x80) {
            x = b[p++]!;
            hi = (x & 0x7f) * 268435456; // 2^28
            if (x >= 0x80) {
              x = b[p++]!;
              hi += (x & 0x7f) * 34359738368; // 2^35
              if (x >= 0x80) {
                x = b[p++]!;
                hi += (x & 0x7f) * 4398046511104; // 2^42
                if (x >= 0x80) return this.sint64Long();
              }
            }
          }
        }
      }
    }
    // Past the end, b[p] is undefined and reads as 0: caught here.
    if (p > b.length) throw OFF;
    this.pos = p;
    const half = (lo >>> 1) + hi / 2;
    return lo & 1 ? -(half + 1) : half;
  }

  private sint64Long(): number {
    const b = this.b;
    if (this.pos >= b.length) throw OFF;
    let x = b[this.pos++]!;
    const negative = x & 1;
    // half = v >>> 1, summed term by term so it stays exact up to 2^53.
    let half = (x & 0x7f) >>> 1;
    for (let shift = 6; x >= 0x80; shift += 7) {
      if (shift > 69 || this.pos >= b.length) throw OFF;
      x = b[this.pos++]!;
      half += (x & 0x7f) * 2 ** shift;
    }
    const n = negative ? -(half + 1) : half;
    return Math.min(Math.max(n, -MAX_SAFE), MAX_SAFE);
  }

  /** A length-delimited field's end; the position is then at its first byte. */
  end(): number {
    const len = this.u32();
    const end = this.pos + len;
    if (end > this.b.length) throw OFF;
    return end;
  }

  /** Where the last dataPoint()'s payload lies (empty when it had none). */
  payloadStart = 0;
  payloadEnd = 0;

  /** One length-delimited DataPoint (after its tag): returns its elapsed time, sets the payload span. */
  dataPoint(): number {
    const end = this.end();
    let elapsed = 0;
    this.payloadStart = this.payloadEnd = end;
    while (this.pos < end) {
      const tag = this.b[this.pos++];
      if (tag === 0x08) elapsed = this.sint64();
      else if (tag === 0x12) {
        this.payloadEnd = this.end();
        this.payloadStart = this.pos;
        this.pos = this.payloadEnd;
      } else throw OFF;
    }
    if (this.pos !== end) throw OFF;
    return elapsed;
  }

  str(): string {
    const end = this.end();
    const s = Buffer.from(this.b.buffer, this.b.byteOffset + this.pos, end - this.pos).toString("utf8");
    this.pos = end;
    return s;
  }
}

function dataId(s: Scan): RawDataId {
  const end = s.end();
  let name = "";
  let type = "";
  while (s.pos < end) {
    const tag = s.b[s.pos++];
    if (tag === 0x0a) name = s.str();
    else if (tag === 0x12) type = s.str();
    else throw OFF;
  }
  if (s.pos !== end) throw OFF;
  return { name, type };
}

function group(s: Scan): RawPointGroup {
  const end = s.end();
  const b = s.b;
  let id: RawDataId | undefined;
  let alias = 0;
  let aliasSeen = false;
  let count = 0;
  let rawStart = -1;
  let rawEnd = -1;
  let payloadBytes = 0;
  let min = Infinity;
  let max = -Infinity;
  while (s.pos < end) {
    const at = s.pos;
    const tag = b[s.pos++];
    if (tag === 0x1a) {
      // A data point. Its entries must lie back to back, so that the group is one span of the frame.
      if (count === 0) rawStart = at;
      else if (at !== rawEnd) throw OFF;
      const elapsed = s.dataPoint();
      payloadBytes += s.payloadEnd - s.payloadStart;
      if (elapsed < min) min = elapsed;
      if (elapsed > max) max = elapsed;
      rawEnd = s.pos;
      count++;
    } else if (tag === 0x0a && id === undefined && !aliasSeen) id = dataId(s);
    else if (tag === 0x10 && id === undefined && !aliasSeen) {
      alias = s.u32();
      aliasSeen = true;
    } else throw OFF;
  }
  if (s.pos !== end) throw OFF;
  const raw = count === 0 ? new Uint8Array(0) : b.subarray(rawStart, rawEnd);
  return new RawPointGroup(id, alias, count, raw, payloadBytes, count === 0 ? 0 : min, count === 0 ? 0 : max);
}

function streamChunk(s: Scan, out: ScannedUpstreamChunk): void {
  const end = s.end();
  while (s.pos < end) {
    const tag = s.b[s.pos++];
    if (tag === 0x08) out.sequenceNumber = s.u32();
    else if (tag === 0x12) out.groups.push(group(s));
    else throw OFF;
  }
  if (s.pos !== end) throw OFF;
}

/**
 * Scans an encoded Message holding an UpstreamChunk. Undefined when it is anything else or off the
 * plain shape; the caller then decodes it the ordinary way.
 */
export function scanUpstreamChunkMessage(frame: Uint8Array): ScannedUpstreamChunk | undefined {
  if (frame.length < 3 || frame[0] !== UPSTREAM_CHUNK_TAG[0] || frame[1] !== UPSTREAM_CHUNK_TAG[1]) return undefined;
  const s = new Scan(frame);
  s.pos = 2;
  const out: ScannedUpstreamChunk = { streamIdAlias: 0, sequenceNumber: 0, dataIds: [], groups: [] };
  try {
    const end = s.end();
    if (end !== frame.length) return undefined;
    let chunkSeen = false;
    while (s.pos < end) {
      const tag = frame[s.pos++];
      if (tag === 0x08) out.streamIdAlias = s.u32();
      else if (tag === 0x12 && !chunkSeen) {
        chunkSeen = true;
        streamChunk(s, out);
      } else if (tag === 0x1a) out.dataIds.push(dataId(s));
      else if (tag === 0x22) {
        // UpstreamChunkExtensionFields has no fields: only an empty one is on the path.
        if (s.end() !== s.pos) return undefined;
      } else return undefined;
    }
    return out;
  } catch (e) {
    if (e === OFF) return undefined;
    throw e;
  }
}
