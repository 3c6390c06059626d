// Binary form of a stored chunk (one LMDB value per chunk, many points each):
//   u32le point count | u16le data-id count | per data id: u16le type length, type, u16le name length, name
//   | per point: u16le data-id index, f64le elapsed ns, u32le payload length, payload
// Data ids are listed once per chunk, so a 16-byte point costs 30 bytes. Decoding gives a
// struct-of-arrays view over the buffer (no per-point objects) and, when wanted, DataPoint objects.
import type { DataPoint } from "../datapoint.js";
import { FramePoint } from "../ipc/frame-point.js";

export interface DataId {
  name: string;
  type: string;
}

export interface DecodedChunk {
  ids: DataId[];
  count: number;
  idIndex: Uint16Array;
  elapsedNs: Float64Array;
  payloadStart: Uint32Array;
  payloadEnd: Uint32Array;
  /** The chunk buffer the payload offsets refer to. */
  buffer: Buffer;
}

const MAX_IDS = 0xffff;
const f64 = new Float64Array(1);
const f64b = new Uint8Array(f64.buffer);

/**
 * Builds a chunk incrementally: each point is written into a growing buffer as it is added, so callers
 * that batch for a flush interval do not keep point objects alive (they die young, cheap for the GC).
 */
export class ChunkBuilder {
  private data = Buffer.allocUnsafe(64 * 1024);
  private len = 0;
  private ids: Array<[Buffer, Buffer]> = [];
  private idBytes = 0;
  private byType = new Map<string, Map<string, number>>();
  private lastType = "";
  private lastName = "";
  private lastId = -1;
  count = 0;

  /** Bytes the chunk will take (without the reserved header). */
  get size(): number {
    return 6 + this.idBytes + this.len;
  }

  /** Adds a point. Throws when a chunk would hold more than 65535 data ids. */
  add(p: DataPoint): void {
    let id: number;
    if (p.type === this.lastType && p.name === this.lastName && this.lastId >= 0) id = this.lastId;
    else {
      id = this.idOf(p.type, p.name);
      this.lastType = p.type;
      this.lastName = p.name;
      this.lastId = id;
    }
    // A FIFO point's bytes are copied from the read buffer without making a view of them.
    let pl: Uint8Array;
    let ps = 0;
    let n: number;
    if (p instanceof FramePoint && p.src !== undefined) {
      pl = p.src;
      ps = p.payloadStart;
      n = p.payloadLength;
    } else {
      pl = p.payload;
      n = pl.length;
    }
    if (this.len + 14 + n > this.data.length) this.grow(14 + n);
    const d = this.data;
    let o = this.len;
    d[o] = id & 0xff;
    d[o + 1] = id >>> 8;
    f64[0] = p.elapsedNs;
    for (let i = 0; i < 8; i++) d[o + 2 + i] = f64b[i]!; // little-endian hosts (x86, arm): f64le
    d[o + 10] = n & 0xff;
    d[o + 11] = (n >>> 8) & 0xff;
    d[o + 12] = (n >>> 16) & 0xff;
    d[o + 13] = n >>> 24;
    o += 14;
    if (n <= 64) for (let i = 0; i < n; i++) d[o + i] = pl[ps + i]!;
    else d.set(ps === 0 && pl.length === n ? pl : pl.subarray(ps, ps + n), o);
    this.len = o + n;
    this.count++;
  }

  /** The finished chunk after `reserve` leading bytes left for the caller's header; resets the builder. */
  finish(reserve = 0): Buffer {
    const b = Buffer.allocUnsafe(reserve + this.size);
    b.writeUInt32LE(this.count, reserve);
    b.writeUInt16LE(this.ids.length, reserve + 4);
    let off = reserve + 6;
    for (const [t, n] of this.ids) {
      b.writeUInt16LE(t.length, off);
      off += 2 + t.copy(b, off + 2);
      b.writeUInt16LE(n.length, off);
      off += 2 + n.copy(b, off + 2);
    }
    this.data.copy(b, off, 0, this.len);
    this.reset();
    return b;
  }

  reset(): void {
    this.len = 0;
    this.count = 0;
    this.ids = [];
    this.idBytes = 0;
    this.byType = new Map();
    this.lastId = -1;
    if (this.data.length > 4 * 1024 * 1024) this.data = Buffer.allocUnsafe(64 * 1024);
  }

  private idOf(type: string, name: string): number {
    let names = this.byType.get(type);
    if (names === undefined) this.byType.set(type, (names = new Map()));
    let id = names.get(name);
    if (id === undefined) {
      if (this.ids.length >= MAX_IDS) throw new Error("too many data ids in one chunk");
      id = this.ids.length;
      names.set(name, id);
      const t = Buffer.from(type, "utf8");
      const n = Buffer.from(name, "utf8");
      this.ids.push([t, n]);
      this.idBytes += 4 + t.length + n.length;
    }
    return id;
  }

  private grow(need: number): void {
    const next = Buffer.allocUnsafe(Math.max(this.data.length * 2, this.len + need));
    this.data.copy(next, 0, 0, this.len);
    this.data = next;
  }
}

/**
 * Encodes points into one chunk, after `reserve` leading bytes left for the caller's header.
 * Throws when a batch holds more than 65535 data ids (split it first).
 */
export function encodeChunk(points: readonly DataPoint[], reserve = 0): Buffer {
  const b = new ChunkBuilder();
  for (const p of points) b.add(p);
  return b.finish(reserve);
}

export function chunkPointCount(buf: Uint8Array): number {
  return (buf[0]! | (buf[1]! << 8) | (buf[2]! << 16)) + buf[3]! * 0x1000000;
}

export function decodeChunk(buffer: Buffer): DecodedChunk {
  const count = buffer.readUInt32LE(0);
  const idCount = buffer.readUInt16LE(4);
  const ids: DataId[] = [];
  let off = 6;
  for (let i = 0; i < idCount; i++) {
    const tl = buffer.readUInt16LE(off);
    const type = buffer.toString("utf8", off + 2, off + 2 + tl);
    off += 2 + tl;
    const nl = buffer.readUInt16LE(off);
    const name = buffer.toString("utf8", off + 2, off + 2 + nl);
    off += 2 + nl;
    ids.push({ name, type });
  }
  const idIndex = new Uint16Array(count);
  const elapsedNs = new Float64Array(count);
  const payloadStart = new Uint32Array(count);
  const payloadEnd = new Uint32Array(count);
  // Byte reads rather than Buffer's readUInt*LE: this runs per point, and those check bounds each call.
  const b = buffer;
  const n = b.length;
  for (let i = 0; i < count; i++) {
    if (off + 14 > n) throw new Error("chunk length mismatch");
    idIndex[i] = b[off]! | (b[off + 1]! << 8);
    for (let k = 0; k < 8; k++) f64b[k] = b[off + 2 + k]!;
    elapsedNs[i] = f64[0]!;
    const pl = (b[off + 10]! | (b[off + 11]! << 8) | (b[off + 12]! << 16)) + b[off + 13]! * 0x1000000;
    payloadStart[i] = off + 14;
    off += 14 + pl;
    payloadEnd[i] = off;
  }
  if (off !== n) throw new Error("chunk length mismatch");
  return { ids, count, idIndex, elapsedNs, payloadStart, payloadEnd, buffer };
}

/** DataPoint objects of a decoded chunk (payloads are views into the chunk buffer). */
export function chunkPoints(c: DecodedChunk, srcId = ""): DataPoint[] {
  const out: DataPoint[] = new Array(c.count);
  for (let i = 0; i < c.count; i++) {
    const id = c.ids[c.idIndex[i]!]!;
    out[i] = {
      name: id.name,
      type: id.type,
      payload: c.buffer.subarray(c.payloadStart[i]!, c.payloadEnd[i]!),
      elapsedNs: c.elapsedNs[i]!,
      srcId,
    };
  }
  return out;
}

export interface PointGroup {
  dataId: DataId;
  points: Array<{ elapsedNs: number; payload: Buffer }>;
}

/**
 * Points grouped by data id, in first-appearance order, points in chunk order within a group: the shape of
 * iSCP data point groups and of StoreDataPointGroup for deferred upload.
 */
export function chunkGroups(c: DecodedChunk): PointGroup[] {
  const groups: PointGroup[] = c.ids.map((dataId) => ({ dataId, points: [] }));
  for (let i = 0; i < c.count; i++) {
    groups[c.idIndex[i]!]!.points.push({ elapsedNs: c.elapsedNs[i]!, payload: c.buffer.subarray(c.payloadStart[i]!, c.payloadEnd[i]!) });
  }
  return groups.filter((g) => g.points.length > 0);
}
