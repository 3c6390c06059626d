// Binary form of a stored chunk (one LMDB value per chunk, many points each), already in the shape of an
// iSCP chunk so that sending one copies a span per data id instead of encoding every point again:
//   u32le point count | 0x80000000 | u16le group count
//   | per group: u16le type length, type, u16le name length, name, u32le point count, u32le body length, body
// A group's body is its points as iSCP `DataPointGroup.data_points` entries, in the order they came:
//   0x1a len | DataPoint { 0x08 elapsed_time (sint64, ZigZag), 0x12 len payload }
// (the bytes protobufjs writes for them). Groups are in order of their first point; the order of points
// of different data ids within one chunk is not kept (an iSCP chunk does not keep it either).
// The chunk's view (groups as spans, chunk-view.ts) is iSCP's, in proto/wire.
// Bit 31 of the count tells this layout from the older one (chunk-v1.ts), which is still read.
import { BufferPool } from "../../proto/wire/buffer-pool.js";
import type { DataPoint } from "../datapoint.js";
import { FramePoint } from "../ipc/frame-point.js";
import { unzigzag, zigzag, zz } from "../../proto/wire/pb-bits.js";
import { len32, len64, putVarint32, putVarint64, readVarint64, rv } from "../../proto/wire/varint.js";
import type { ChunkView, DataId, GroupSpan } from "../../proto/wire/chunk-view.js";
import { decodeChunkV1 } from "./chunk-v1.js";

/** Points as arrays (decoded from the entries): tests, deferred upload, the enc=json send path. */
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

const LAYOUT = 0x80000000;
const MAX_IDS = 0xffff;
/** Leading bytes a group buffer keeps free, so a one-group chunk is finished in place (header of 16 at most). */
const MAX_RESERVE = 16;
/** Data ids whose buffers are kept between chunks; beyond, they are dropped. */
const KEEP_IDS = 1024;

interface Group {
  type: Buffer;
  name: Buffer;
  data: Buffer;
  /** Where the entries start in data: room for the chunk and group headers before them. */
  head: number;
  len: number;
  count: number;
}

/**
 * Where finished chunks and the builders' buffers come from. A finished chunk over 64 KiB goes back once
 * nothing reads it: the queue gives it back when its commit completed (store.ts).
 */
export const chunkBuffers = new BufferPool(64 * 1024 * 1024);

function newGroupBuffer(type: Buffer, name: Buffer, size: number): { data: Buffer; head: number } {
  const head = MAX_RESERVE + 6 + 12 + type.length + name.length;
  return { data: chunkBuffers.take(head + size), head };
}

/**
 * Builds a chunk incrementally: each point is encoded into its data id's buffer as it is added, so callers
 * that batch for a flush interval keep no point objects alive.
 */
export class ChunkBuilder {
  private readonly byType = new Map<string, Map<string, Group>>();
  private known = 0;
  private order: Group[] = [];
  private last: Group | undefined;
  private lastType = "";
  private lastName = "";
  private bytes = 0;
  count = 0;

  /** Bytes the chunk will take (without the reserved header). */
  get size(): number {
    return 6 + this.bytes;
  }

  /** Adds a point. Throws when a chunk would hold more than 65535 data ids. */
  add(p: DataPoint): void {
    let g = this.last;
    if (g === undefined || p.type !== this.lastType || p.name !== this.lastName) {
      g = this.groupOf(p.type, p.name);
      this.last = g;
      this.lastType = p.type;
      this.lastName = p.name;
    }
    if (g.count === 0) {
      if (this.order.length >= MAX_IDS) throw new Error("too many data ids in one chunk");
      this.order.push(g);
      this.bytes += 12 + g.type.length + g.name.length;
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
    zigzag(p.elapsedNs);
    const lo = zz.lo;
    const hi = zz.hi;
    const body = 2 + len64(lo, hi) + len32(n) + n;
    const entry = 1 + len32(body) + body;
    if (g.head + g.len + entry > g.data.length) this.grow(g, entry);
    const d = g.data;
    let o = g.head + g.len;
    d[o++] = 0x1a;
    o = putVarint32(d, o, body);
    d[o++] = 0x08;
    o = putVarint64(d, o, lo, hi);
    d[o++] = 0x12;
    o = putVarint32(d, o, n);
    if (n <= 64) for (let i = 0; i < n; i++) d[o + i] = pl[ps + i]!;
    else d.set(ps === 0 && pl.length === n ? pl : pl.subarray(ps, ps + n), o);
    g.len += entry;
    g.count++;
    this.bytes += entry;
    this.count++;
  }

  /** The finished chunk after `reserve` (at most 16) leading bytes left for the caller's header; resets the builder. */
  finish(reserve = 0): Buffer {
    if (reserve > MAX_RESERVE) throw new Error(`at most ${MAX_RESERVE} reserved bytes`);
    const order = this.order;
    let b: Buffer;
    if (order.length === 1) {
      // One data id (the usual case): the headers go into the room left before the entries, no copy.
      const g = order[0]!;
      b = g.data.subarray(g.head - (reserve + 6 + 12 + g.type.length + g.name.length), g.head + g.len);
      const fresh = newGroupBuffer(g.type, g.name, Math.max(1024, g.len));
      g.data = fresh.data;
    } else b = chunkBuffers.take(reserve + this.size);
    b.writeUInt32LE((this.count | LAYOUT) >>> 0, reserve);
    b.writeUInt16LE(order.length, reserve + 4);
    let o = reserve + 6;
    for (const g of order) {
      b.writeUInt16LE(g.type.length, o);
      o += 2 + g.type.copy(b, o + 2);
      b.writeUInt16LE(g.name.length, o);
      o += 2 + g.name.copy(b, o + 2);
      b.writeUInt32LE(g.count, o);
      b.writeUInt32LE(g.len, o + 4);
      o += 8;
      if (order.length > 1) o += g.data.copy(b, o, g.head, g.head + g.len);
    }
    this.reset();
    return b;
  }

  reset(): void {
    for (const g of this.order) {
      g.len = 0;
      g.count = 0;
      if (g.data.length > 4 * 1024 * 1024) {
        chunkBuffers.give(g.data);
        g.data = newGroupBuffer(g.type, g.name, 64 * 1024).data;
      }
    }
    this.order = [];
    this.bytes = 0;
    this.count = 0;
    if (this.known > KEEP_IDS) {
      this.byType.clear();
      this.known = 0;
      this.last = undefined;
    }
  }

  private groupOf(type: string, name: string): Group {
    let names = this.byType.get(type);
    if (names === undefined) this.byType.set(type, (names = new Map()));
    let g = names.get(name);
    if (g === undefined) {
      const t = Buffer.from(type, "utf8");
      const nm = Buffer.from(name, "utf8");
      const { data, head } = newGroupBuffer(t, nm, 256);
      g = { type: t, name: nm, data, head, len: 0, count: 0 };
      names.set(name, g);
      this.known++;
    }
    return g;
  }

  private grow(g: Group, need: number): void {
    const next = chunkBuffers.take(Math.max(g.data.length * 2, g.head + g.len + need));
    g.data.copy(next, g.head, g.head, g.head + g.len);
    chunkBuffers.give(g.data);
    g.data = next;
  }
}

/** Encodes points into one chunk, after `reserve` leading bytes left for the caller's header. */
export function encodeChunk(points: readonly DataPoint[], reserve = 0): Buffer {
  const b = new ChunkBuilder();
  for (const p of points) b.add(p);
  return b.finish(reserve);
}

/** The groups of a stored chunk; a chunk in the older layout is converted (read once, after an upgrade). */
export function chunkView(buffer: Buffer): ChunkView {
  const word = buffer.readUInt32LE(0);
  if ((word & LAYOUT) === 0) return chunkView(encodeChunk(chunkPoints(decodeChunkV1(buffer))));
  const count = word & 0x7fffffff;
  const n = buffer.readUInt16LE(4);
  const groups: GroupSpan[] = new Array(n);
  let off = 6;
  let points = 0;
  for (let i = 0; i < n; i++) {
    const typeStart = off + 2;
    const typeEnd = typeStart + buffer.readUInt16LE(off);
    const nameStart = typeEnd + 2;
    const nameEnd = nameStart + buffer.readUInt16LE(typeEnd);
    const gc = buffer.readUInt32LE(nameEnd);
    const start = nameEnd + 8;
    const end = start + buffer.readUInt32LE(nameEnd + 4);
    if (end > buffer.length) throw new Error("chunk length mismatch");
    const dataId = {
      name: buffer.toString("utf8", nameStart, nameEnd),
      type: buffer.toString("utf8", typeStart, typeEnd),
    };
    groups[i] = { dataId, nameStart, nameEnd, typeStart, typeEnd, count: gc, start, end };
    points += gc;
    off = end;
  }
  if (off !== buffer.length || points !== count) throw new Error("chunk length mismatch");
  return { count, groups, buffer };
}

/** Every point of a stored chunk, group after group. */
export function decodeChunk(buffer: Buffer): DecodedChunk {
  if ((buffer.readUInt32LE(0) & LAYOUT) === 0) return decodeChunkV1(buffer);
  const v = chunkView(buffer);
  const idIndex = new Uint16Array(v.count);
  const elapsedNs = new Float64Array(v.count);
  const payloadStart = new Uint32Array(v.count);
  const payloadEnd = new Uint32Array(v.count);
  let i = 0;
  v.groups.forEach((g, gi) => {
    let p = g.start;
    for (let k = 0; k < g.count; k++, i++) {
      if (buffer[p] !== 0x1a) throw new Error("corrupt chunk entry");
      readVarint64(buffer, p + 1, g.end);
      const end = rv.pos + rv.lo;
      if (end > g.end) throw new Error("corrupt chunk entry");
      idIndex[i] = gi;
      p = rv.pos;
      let elapsed = 0;
      let ps = p;
      let pe = p;
      while (p < end) {
        const tag = buffer[p++];
        readVarint64(buffer, p, end);
        if (tag === 0x08) {
          elapsed = unzigzag(rv.lo, rv.hi);
          p = rv.pos;
        } else if (tag === 0x12) {
          ps = rv.pos;
          pe = p = rv.pos + rv.lo;
        } else throw new Error("corrupt chunk entry");
      }
      if (p !== end) throw new Error("corrupt chunk entry");
      elapsedNs[i] = elapsed;
      payloadStart[i] = ps;
      payloadEnd[i] = pe;
    }
    if (p !== g.end) throw new Error("chunk length mismatch");
  });
  return { ids: v.groups.map((g) => g.dataId), count: v.count, idIndex, elapsedNs, payloadStart, payloadEnd, buffer };
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
    groups[c.idIndex[i]!]!.points.push({
      elapsedNs: c.elapsedNs[i]!,
      payload: c.buffer.subarray(c.payloadStart[i]!, c.payloadEnd[i]!),
    });
  }
  return groups.filter((g) => g.points.length > 0);
}
