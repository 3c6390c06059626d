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

/**
 * The encoded `data_id` field of a StoreDataPointGroup (tag, length, name, type), per type and name: every chunk
 * of a stream repeats its few data ids, so each is encoded once rather than per chunk. Bounded: past DATA_IDS_MAX
 * entries the cache starts over.
 */
const dataIds = new Map<string, Map<string, Buffer>>();
let cachedIds = 0;
const DATA_IDS_MAX = 65_536;

function dataIdField(name: string, type: string): Buffer {
  let byName = dataIds.get(type);
  let f = byName?.get(name);
  if (f !== undefined) return f;
  const n = Buffer.from(name, "utf8");
  const t = Buffer.from(type, "utf8");
  const id = stringField(n) + stringField(t);
  f = Buffer.allocUnsafe(1 + varintSize(id) + id);
  f[0] = 0x0a; // StoreDataPointGroup.data_id
  let o = putVarint(f, 1, id);
  for (const [tag, s] of [
    [0x0a, n],
    [0x12, t],
  ] as const) {
    if (s.length === 0) continue;
    f[o++] = tag;
    o = putVarint(f, o, s.length);
    o += s.copy(f, o);
  }
  if (++cachedIds > DATA_IDS_MAX) {
    dataIds.clear();
    cachedIds = 1;
    byName = undefined;
  }
  if (byName === undefined) dataIds.set(type, (byName = new Map()));
  byName.set(name, f);
  return f;
}

/** `alloc`: where the stored payload's buffer comes from (the broker reuses them, upstream-store.ts). */
export function encodeRawChunk(c: RawChunk, alloc: (n: number) => Buffer = Buffer.allocUnsafe): PreparedChunk {
  const groups = c.rawGroups;
  let size = c.sequenceNumber === 0 ? 0 : 1 + varintSize(c.sequenceNumber);
  for (const g of groups) {
    const body = dataIdField(g.name, g.type).length + g.points.raw.length;
    size += 1 + varintSize(body) + body;
  }
  const b = alloc(size);
  let o = 0;
  if (c.sequenceNumber !== 0) {
    b[o++] = 0x08;
    o = putVarint(b, o, c.sequenceNumber);
  }
  let points = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const g of groups) {
    const id = dataIdField(g.name, g.type);
    const raw = g.points.raw;
    b[o++] = 0x12; // StoreDataChunk.data_point_groups
    o = putVarint(b, o, id.length + raw.length);
    b.set(id, o);
    o += id.length;
    b.set(raw, o);
    retagEntries(b, o, o + raw.length, 0x12); // DataPointGroup.data_points (3) -> StoreDataPointGroup.data_points (2)
    o += raw.length;
    if (g.points.count === 0) continue;
    points += g.points.count;
    if (g.points.minElapsed < min) min = g.points.minElapsed;
    if (g.points.maxElapsed > max) max = g.points.maxElapsed;
  }
  return { payload: b, points, minElapsedNs: points === 0 ? 0 : min, maxElapsedNs: points === 0 ? 0 : max };
}
