// The stored-chunk layout of agents before the iSCP-shaped one (chunk-codec.ts), still read so that a queue
// written by an older agent is sent and uploaded after an upgrade:
//   u32le point count (bit 31 clear) | u16le data-id count | per data id: u16le type length, type,
//   u16le name length, name | per point: u16le data-id index, f64le elapsed ns, u32le payload length, payload
import type { DecodedChunk } from "./chunk-codec.js";
import type { DataId } from "../../proto/wire/chunk-view.js";

const f64 = new Float64Array(1);
const f64b = new Uint8Array(f64.buffer);

export function decodeChunkV1(buffer: Buffer): DecodedChunk {
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
  const b = buffer;
  const n = b.length;
  for (let i = 0; i < count; i++) {
    if (off + 14 > n) throw new Error("chunk length mismatch");
    idIndex[i] = b[off]! | (b[off + 1]! << 8);
    if (idIndex[i]! >= idCount) throw new Error("chunk data id out of range");
    for (let k = 0; k < 8; k++) f64b[k] = b[off + 2 + k]!; // little-endian hosts (x86, arm)
    elapsedNs[i] = f64[0]!;
    const pl = (b[off + 10]! | (b[off + 11]! << 8) | (b[off + 12]! << 16)) + b[off + 13]! * 0x1000000;
    payloadStart[i] = off + 14;
    off += 14 + pl;
    payloadEnd[i] = off;
  }
  if (off !== n) throw new Error("chunk length mismatch");
  return { ids, count, idIndex, elapsedNs, payloadStart, payloadEnd, buffer };
}

/** Encodes points in the old layout (tests: a queue left by an older agent). */
export function encodeChunkV1(
  points: ReadonlyArray<{ name: string; type: string; elapsedNs: number; payload: Uint8Array }>,
): Buffer {
  const ids: DataId[] = [];
  const index = new Map<string, number>();
  const idx = points.map((p) => {
    const k = `${p.type}\u0000${p.name}`;
    let i = index.get(k);
    if (i === undefined) index.set(k, (i = ids.push({ name: p.name, type: p.type }) - 1));
    return i;
  });
  const parts: Buffer[] = [Buffer.alloc(6)];
  parts[0]!.writeUInt32LE(points.length, 0);
  parts[0]!.writeUInt16LE(ids.length, 4);
  for (const id of ids)
    for (const s of [id.type, id.name]) {
      const b = Buffer.from(s, "utf8");
      const l = Buffer.alloc(2);
      l.writeUInt16LE(b.length);
      parts.push(l, b);
    }
  points.forEach((p, i) => {
    const h = Buffer.alloc(14);
    h.writeUInt16LE(idx[i]!, 0);
    h.writeDoubleLE(p.elapsedNs, 2);
    h.writeUInt32LE(p.payload.length, 10);
    parts.push(h, Buffer.from(p.payload));
  });
  return Buffer.concat(parts);
}
