// Binary form of a stored chunk (one LMDB value per chunk, many points each):
//   u32le point count | u16le data-id count | per data id: u16le type length, type, u16le name length, name
//   | per point: u16le data-id index, f64le elapsed ns, u32le payload length, payload
// Data ids are listed once per chunk, so a 16-byte point costs 30 bytes. Decoding gives a
// struct-of-arrays view over the buffer (no per-point objects) and, when wanted, DataPoint objects.
import type { DataPoint } from "../datapoint.js";

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

/**
 * Encodes points into one chunk, after `reserve` leading bytes left for the caller's header.
 * Throws when a batch holds more than 65535 data ids (split it first).
 */
export function encodeChunk(points: readonly DataPoint[], reserve = 0): Buffer {
  const byType = new Map<string, Map<string, number>>();
  const ids: Array<[Buffer, Buffer]> = [];
  const idx = new Uint16Array(points.length);
  let size = reserve + 6;
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    let names = byType.get(p.type);
    if (names === undefined) byType.set(p.type, (names = new Map()));
    let id = names.get(p.name);
    if (id === undefined) {
      if (ids.length >= MAX_IDS) throw new Error("too many data ids in one chunk");
      id = ids.length;
      names.set(p.name, id);
      const t = Buffer.from(p.type, "utf8");
      const n = Buffer.from(p.name, "utf8");
      ids.push([t, n]);
      size += 4 + t.length + n.length;
    }
    idx[i] = id;
    size += 14 + p.payload.length;
  }
  const b = Buffer.allocUnsafe(size);
  b.writeUInt32LE(points.length, reserve);
  b.writeUInt16LE(ids.length, reserve + 4);
  let off = reserve + 6;
  for (const [t, n] of ids) {
    b.writeUInt16LE(t.length, off);
    off += 2 + t.copy(b, off + 2);
    b.writeUInt16LE(n.length, off);
    off += 2 + n.copy(b, off + 2);
  }
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    b.writeUInt16LE(idx[i]!, off);
    b.writeDoubleLE(p.elapsedNs, off + 2);
    b.writeUInt32LE(p.payload.length, off + 10);
    b.set(p.payload, off + 14);
    off += 14 + p.payload.length;
  }
  return b;
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
  for (let i = 0; i < count; i++) {
    idIndex[i] = buffer.readUInt16LE(off);
    elapsedNs[i] = buffer.readDoubleLE(off + 2);
    const pl = buffer.readUInt32LE(off + 10);
    payloadStart[i] = off + 14;
    off += 14 + pl;
    payloadEnd[i] = off;
  }
  if (off !== buffer.length) throw new Error("chunk length mismatch");
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
