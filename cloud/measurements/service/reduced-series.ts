// A numeric series reduced to at most `buckets` time buckets: per bucket the smallest and largest
// value with their times (so a line through them, in time order, looks like the full series at that
// width) and the number of points. Min and max do not depend on order, so the chunks are read in
// storage order and each point is visited once; memory is the buckets, whatever the series' length.
import { Invalid, NotFound } from "../../errors.js";
import { forEachPoint } from "../formats/chunk-points.js";
import { formatNs } from "../formats/time.js";
import { numericReader } from "../formats/numeric.js";
import { measurementsForName } from "../repo/measurement-list.js";
import { payloadsOf, type ChunkSource } from "./data-stream.js";
import { basetimeNs } from "./model.js";
import { chunkPages } from "./chunk-pages.js";

export interface SeriesQuery {
  project: string;
  measurement: string;
  dataType: string;
  dataId: string;
  /** JSON payloads (json, or string holding JSON): the JSON pointer of the numeric field; absent = the payload itself. */
  field?: string;
  startNs?: bigint;
  endNs?: bigint;
  buckets: number;
}

export interface ReducedSeries {
  measurement_uuid: string;
  data_type: string;
  data_id: string;
  basetime: string;
  start: string;
  end: string;
  bucket_count: number;
  /** Points in the window that held a number of the type. */
  point_count: number;
  /** Points in the window whose payload was not a number of the type. */
  skipped_count: number;
  /** Columns, one entry per non-empty bucket in time order; times are seconds since the base time. */
  buckets: { time_min: number[]; min: number[]; time_max: number[]; max: number[]; count: number[] };
}

const PAGE = 256;

export async function reducedSeries(src: ChunkSource, q: SeriesQuery): Promise<ReducedSeries> {
  const m = (await measurementsForName(src.db, q.project, q.measurement)).find(
    (r) => r.uuid === q.measurement.toLowerCase(),
  );
  if (!m) throw new NotFound("measurement not found");
  const read = numericReader(q.dataType, q.field);
  if (!read)
    throw new Invalid(`data_type ${q.dataType} is not numeric`, {
      data_type: "a numeric type (float64, int64, ...), json, or string with a field",
    });
  const base = basetimeNs(m);
  const startNs = q.startNs ?? base;
  const endNs = q.endNs ?? base + BigInt(m.max_elapsed_ns) + 1n;
  if (endNs <= startNs) throw new Invalid("end must be after start", { end: "must be after start" });
  // Elapsed times (ns since the base time) as doubles: exact to well below a bucket's width.
  const from = Number(startNs - base);
  const to = Number(endNs - base);
  const width = (to - from) / q.buckets;
  const n = q.buckets;
  const count = new Float64Array(n);
  const min = new Float64Array(n).fill(Infinity);
  const max = new Float64Array(n).fill(-Infinity);
  const tMin = new Float64Array(n);
  const tMax = new Float64Array(n);
  let points = 0;
  let skipped = 0;
  for await (const rows of chunkPages(src.db, { measUuid: m.uuid, desc: false, from, to, limit: PAGE })) {
    const payloads = await payloadsOf(
      src.files,
      rows.flatMap((r) => r.chunks),
    );
    for (const payload of payloads) {
      if (payload.status === "rejected") continue;
      try {
        forEachPoint(payload.value, q.dataType, q.dataId, (t, buf, off, len) => {
          if (t < from || t >= to) return;
          const v = read(buf, off, len);
          if (v === undefined) return void skipped++;
          points++;
          const b = Math.min(n - 1, Math.floor((t - from) / width));
          count[b]!++;
          if (v < min[b]! || (v === min[b] && t < tMin[b]!)) (min[b] = v), (tMin[b] = t);
          if (v > max[b]! || (v === max[b] && t > tMax[b]!)) (max[b] = v), (tMax[b] = t);
        });
      } catch {
        // A damaged chunk is left out here; the data endpoint reports it.
      }
    }
  }
  const out: ReducedSeries["buckets"] = { time_min: [], min: [], time_max: [], max: [], count: [] };
  for (let b = 0; b < n; b++) {
    if (count[b] === 0) continue;
    out.time_min.push(tMin[b]! / 1e9);
    out.min.push(min[b]!);
    out.time_max.push(tMax[b]! / 1e9);
    out.max.push(max[b]!);
    out.count.push(count[b]!);
  }
  return {
    measurement_uuid: m.uuid,
    data_type: q.dataType,
    data_id: q.dataId,
    basetime: formatNs(base),
    start: formatNs(startNs),
    end: formatNs(endNs),
    bucket_count: n,
    point_count: points,
    skipped_count: skipped,
    buckets: out,
  };
}
