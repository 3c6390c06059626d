// A stored chunk (runtime/queue/chunk-codec.ts) straight to the protobuf bytes of one iSCP
// `Message { upstream_chunk }`, without per-point objects: one pass sizes every part, one buffer
// is allocated, a second pass writes it. The bytes are those protobufjs writes for the same chunk
// built as objects (ClientUpstream's object path): every field it sets is written, in field order.
//
//   Message        upstream_chunk = 70 (LEN)
//   UpstreamChunk  stream_id_alias = 1, stream_chunk = 2 (LEN), data_ids = 3 (LEN, repeated)
//   StreamChunk    sequence_number = 1, data_point_groups = 2 (LEN, repeated)
//   DataPointGroup data_id = 1 (LEN) | data_id_alias = 2, data_points = 3 (LEN, repeated)
//   DataPoint      elapsed_time = 1 (sint64, ZigZag), payload = 2 (LEN)
//   DataID         name = 1, type = 2 (strings)
import Long from "long";
import type { DataId, DecodedChunk } from "../queue/chunk-codec.js";

export interface ChunkFrameOptions {
  streamIdAlias: number;
  sequenceNumber: number;
  /** The broker's alias for a data id, if known (0 counts as none, as on the object path). */
  aliasOf(name: string, type: string): number | undefined;
}

export interface ChunkFrame {
  /** The whole encoded Message. */
  frame: Uint8Array;
  points: number;
  /** Data ids sent by name (no alias yet), listed in `data_ids` so that the broker assigns aliases. */
  askIds: DataId[];
}

const TWO32 = 4294967296;
const TWO63 = 9223372036854775808;

// Per-point scratch, reused across calls (grown, never shrunk): ZigZag halves, DataPoint size, and the
// next point of the same data id (groups are linked lists through the chunk, so grouping is O(points)).
let zzLo = new Uint32Array(0);
let zzHi = new Uint32Array(0);
let pointSize = new Uint32Array(0);
let nextInGroup = new Int32Array(0);
// Per-data-id scratch: first and last point, group body size, alias (0: none), DataID body size.
let head = new Int32Array(0);
let tail = new Int32Array(0);
let groupSize = new Float64Array(0);
let aliasOfId = new Uint32Array(0);
let idSize = new Uint32Array(0);

function reserve(points: number, ids: number): void {
  if (zzLo.length < points) {
    const n = Math.max(points, zzLo.length * 2, 1024);
    zzLo = new Uint32Array(n);
    zzHi = new Uint32Array(n);
    pointSize = new Uint32Array(n);
    nextInGroup = new Int32Array(n);
  }
  if (head.length < ids) {
    const n = Math.max(ids, head.length * 2, 64);
    head = new Int32Array(n);
    tail = new Int32Array(n);
    groupSize = new Float64Array(n);
    aliasOfId = new Uint32Array(n);
    idSize = new Uint32Array(n);
  }
}

/** Bytes of a varint holding an unsigned 32-bit value. */
function len32(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Bytes of a varint holding an unsigned 64-bit value given as 32-bit halves. */
function len64(lo: number, hi: number): number {
  if (hi === 0) return len32(lo);
  const mid = ((lo >>> 28) | (hi << 4)) >>> 0;
  const top = hi >>> 24;
  if (top === 0) return mid < 0x4000 ? (mid < 0x80 ? 5 : 6) : mid < 0x200000 ? 7 : 8;
  return top < 0x80 ? 9 : 10;
}

/** Bytes of a length-delimited field with a one-byte tag. */
function lenField(n: number): number {
  return 1 + len32(n) + n;
}

/**
 * ZigZag of Math.trunc(v) as sint64 into zzLo/zzHi[i]. Within ±2^31 in int32 arithmetic; beyond, the
 * magnitude is split into 32-bit halves by division (exact for every integer double below 2^63);
 * NaN, ±Infinity and values beyond ±2^63 go through Long.fromNumber as protobufjs's Long would.
 */
function zigzag(v: number, i: number): void {
  if (v >= -0x80000000 && v <= 0x7fffffff) {
    const n = v | 0;
    zzLo[i] = (n << 1) ^ (n >> 31);
    zzHi[i] = 0;
    return;
  }
  let lo: number;
  let hi: number;
  if (v > -TWO63 && v < TWO63) {
    const a = Math.abs(Math.trunc(v));
    hi = Math.floor(a / TWO32);
    lo = a - hi * TWO32;
    if (v < 0) {
      // two's complement of the magnitude
      lo = (~lo + 1) >>> 0;
      hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0;
    }
  } else {
    const l = Long.fromNumber(v);
    lo = l.low >>> 0;
    hi = l.high >>> 0;
  }
  const sign = hi >> 31;
  zzLo[i] = (lo << 1) ^ sign;
  zzHi[i] = ((hi << 1) | (lo >>> 31)) ^ sign;
}

/** Writes an unsigned 32-bit varint at p; returns the position after it. */
function varint(out: Buffer, p: number, v: number): number {
  while (v > 0x7f) {
    out[p++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[p++] = v;
  return p;
}

/** Writes a DataID's length and body (name, type) at p; returns the position after it. */
function writeDataId(out: Buffer, p: number, id: DataId, size: number): number {
  p = varint(out, p, size);
  out[p++] = 0x0a;
  p = varint(out, p, Buffer.byteLength(id.name));
  p += out.write(id.name, p, "utf8");
  out[p++] = 0x12;
  p = varint(out, p, Buffer.byteLength(id.type));
  return p + out.write(id.type, p, "utf8");
}

export function encodeUpstreamChunkMessage(chunk: DecodedChunk, o: ChunkFrameOptions): ChunkFrame {
  const { ids, count, idIndex, elapsedNs, payloadStart, payloadEnd, buffer } = chunk;
  const idCount = ids.length;
  reserve(count, idCount);
  head.fill(-1, 0, idCount);
  groupSize.fill(0, 0, idCount);

  // Pass 1: sizes, and the groups' point lists.
  for (let i = 0; i < count; i++) {
    zigzag(elapsedNs[i]!, i);
    const pl = payloadEnd[i]! - payloadStart[i]!;
    const size = 1 + len64(zzLo[i]!, zzHi[i]!) + lenField(pl);
    pointSize[i] = size;
    const g = idIndex[i]!;
    groupSize[g] += lenField(size);
    nextInGroup[i] = -1;
    if (head[g] === -1) head[g] = i;
    else nextInGroup[tail[g]!] = i;
    tail[g] = i;
  }
  const askIds: DataId[] = [];
  let askBytes = 0;
  let groupsBytes = 0;
  for (let g = 0; g < idCount; g++) {
    if (head[g] === -1) continue;
    const id = ids[g]!;
    const alias = o.aliasOf(id.name, id.type) ?? 0;
    aliasOfId[g] = alias;
    const body = lenField(Buffer.byteLength(id.name)) + lenField(Buffer.byteLength(id.type));
    idSize[g] = body;
    if (alias !== 0) groupSize[g] += 1 + len32(alias);
    else {
      groupSize[g] += lenField(body);
      askIds.push(id);
      askBytes += lenField(body);
    }
    groupsBytes += lenField(groupSize[g]!);
  }
  const seq = o.sequenceNumber >>> 0;
  const alias = o.streamIdAlias >>> 0;
  const streamChunk = 1 + len32(seq) + groupsBytes;
  const upstreamChunk = 1 + len32(alias) + lenField(streamChunk) + askBytes;
  const total = 2 + len32(upstreamChunk) + upstreamChunk;

  // Pass 2: write.
  const out = Buffer.allocUnsafe(total);
  // Small payloads are copied 4 bytes at a time (a native copy per point costs more than it saves).
  const from = new DataView(buffer.buffer, buffer.byteOffset, buffer.length);
  const to = new DataView(out.buffer, out.byteOffset, total);
  out[0] = 0xb2; // field 70, LEN
  out[1] = 0x04;
  let p = varint(out, 2, upstreamChunk);
  out[p++] = 0x08;
  p = varint(out, p, alias);
  out[p++] = 0x12;
  p = varint(out, p, streamChunk);
  out[p++] = 0x08;
  p = varint(out, p, seq);
  for (let g = 0; g < idCount; g++) {
    if (head[g] === -1) continue;
    out[p++] = 0x12;
    p = varint(out, p, groupSize[g]!);
    if (aliasOfId[g] !== 0) {
      out[p++] = 0x10;
      p = varint(out, p, aliasOfId[g]!);
    } else {
      out[p++] = 0x0a;
      p = writeDataId(out, p, ids[g]!, idSize[g]!);
    }
    for (let i = head[g]!; i !== -1; i = nextInGroup[i]!) {
      out[p++] = 0x1a;
      p = varint(out, p, pointSize[i]!);
      out[p++] = 0x08;
      let lo = zzLo[i]!;
      let hi = zzHi[i]!;
      while (hi !== 0) {
        out[p++] = (lo & 0x7f) | 0x80;
        lo = ((lo >>> 7) | (hi << 25)) >>> 0;
        hi >>>= 7;
      }
      p = varint(out, p, lo);
      let s = payloadStart[i]!;
      const e = payloadEnd[i]!;
      out[p++] = 0x12;
      p = varint(out, p, e - s);
      if (e - s > 64) p += buffer.copy(out, p, s, e);
      else {
        for (; s + 4 <= e; s += 4, p += 4) to.setInt32(p, from.getInt32(s));
        for (; s < e; s++) out[p++] = buffer[s]!;
      }
    }
  }
  for (let g = 0; g < idCount; g++) {
    if (head[g] === -1 || aliasOfId[g] !== 0) continue;
    out[p++] = 0x1a;
    p = writeDataId(out, p, ids[g]!, idSize[g]!);
  }
  if (p !== total) throw new Error(`chunk frame size mismatch: wrote ${p} of ${total}`);
  return { frame: out, points: count, askIds };
}
