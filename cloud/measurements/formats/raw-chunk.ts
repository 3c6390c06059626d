// A chunk received over iSCP (enc=proto) stored without decoding its points: the stored row is a
// StoreDataChunk, whose StoreDataPoint is byte for byte the iSCP DataPoint, so each group's received
// `data_points` entries (field 3 of DataPointGroup) are copied and re-tagged as field 2 of
// StoreDataPointGroup. Point count and elapsed range come from the scan.
import type { RawPointGroup } from "../../../proto/wire/chunk-scan.js";
import { retagEntries } from "../../../proto/wire/pb-bits.js";
import { putVarint, varintSize } from "../../../proto/wire/varint.js";

export interface RawChunk {
  sequenceNumber: number;
  rawGroups: Array<{ name: string; type: string; points: RawPointGroup }>;
}

export interface PreparedChunk {
  payload: Buffer;
  points: number;
  minElapsedNs: number;
  maxElapsedNs: number;
}

/** Bytes of a non-empty string field (proto3 leaves empty strings out). */
function stringField(s: Buffer): number {
  return s.length === 0 ? 0 : 1 + varintSize(s.length) + s.length;
}

/** `alloc`: where the stored payload's buffer comes from (the broker reuses them, upstream-store.ts). */
export function encodeRawChunk(c: RawChunk, alloc: (n: number) => Buffer = Buffer.allocUnsafe): PreparedChunk {
  const parts = c.rawGroups.map((g) => {
    const name = Buffer.from(g.name, "utf8");
    const type = Buffer.from(g.type, "utf8");
    const id = stringField(name) + stringField(type);
    const body = 1 + varintSize(id) + id + g.points.raw.length;
    return { name, type, id, body, raw: g.points.raw };
  });
  let size = c.sequenceNumber === 0 ? 0 : 1 + varintSize(c.sequenceNumber);
  for (const p of parts) size += 1 + varintSize(p.body) + p.body;
  const b = alloc(size);
  let o = 0;
  if (c.sequenceNumber !== 0) {
    b[o++] = 0x08;
    o = putVarint(b, o, c.sequenceNumber);
  }
  for (const p of parts) {
    b[o++] = 0x12; // StoreDataChunk.data_point_groups
    o = putVarint(b, o, p.body);
    b[o++] = 0x0a; // StoreDataPointGroup.data_id
    o = putVarint(b, o, p.id);
    for (const [tag, s] of [
      [0x0a, p.name],
      [0x12, p.type],
    ] as const) {
      if (s.length === 0) continue;
      b[o++] = tag;
      o = putVarint(b, o, s.length);
      o += s.copy(b, o);
    }
    b.set(p.raw, o);
    retagEntries(b, o, o + p.raw.length, 0x12); // DataPointGroup.data_points (3) -> StoreDataPointGroup.data_points (2)
    o += p.raw.length;
  }
  let points = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const g of c.rawGroups) {
    if (g.points.count === 0) continue;
    points += g.points.count;
    min = Math.min(min, g.points.minElapsed);
    max = Math.max(max, g.points.maxElapsed);
  }
  return { payload: b, points, minElapsedNs: points === 0 ? 0 : min, maxElapsedNs: points === 0 ? 0 : max };
}
