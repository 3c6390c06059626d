// The reduced-series endpoint (min/max buckets of a numeric series over a time window) and its answer as plot
// lines or as one value per bucket.
import { api, q } from "../api";
import type { Plottable } from "./json-fields";
import type { PlotSeries } from "./plot";

export interface Reduced {
  basetime: string;
  point_count: number;
  buckets: { time_min: number[]; min: number[]; time_max: number[]; max: number[] };
}

/** One series reduced to `buckets` over the whole measurement, or over `window` (epoch seconds) when zoomed. */
export function fetchReduced(
  project: string,
  uuid: string,
  d: Plottable,
  buckets: number,
  window?: [number, number],
): Promise<Reduced> {
  const toIso = (s: number) => new Date(s * 1000).toISOString();
  const w = window ? { start: toIso(window[0]), end: toIso(window[1] + 0.001) } : {};
  return api<Reduced>(
    `/v1/projects/${project}/measurements/${uuid}/series${q({ data_type: d.data_type, data_id: d.data_id, field: d.field, buckets, ...w })}`,
  );
}

/** Bucket minima and maxima in time order: one line that looks like the full series at this width. */
export function toSeries(label: string, r: Reduced): PlotSeries {
  const base = Date.parse(r.basetime) / 1000;
  const times: number[] = [];
  const values: number[] = [];
  const b = r.buckets;
  for (let i = 0; i < b.min.length; i++) {
    const pair: [number, number][] = [
      [b.time_min[i]!, b.min[i]!],
      [b.time_max[i]!, b.max[i]!],
    ];
    if (pair[0][0] > pair[1][0]) pair.reverse();
    for (const [t, v] of pair) {
      if (times.length && times[times.length - 1] === base + t) continue;
      times.push(base + t);
      values.push(v);
    }
  }
  return { label, times, values };
}

/** One (time, value) per bucket: its middle time and the middle of its range (a position's track). */
export function bucketMiddles(r: Reduced): { times: number[]; values: number[] } {
  const base = Date.parse(r.basetime) / 1000;
  const b = r.buckets;
  return {
    times: b.min.map((_v, i) => base + (b.time_min[i]! + b.time_max[i]!) / 2),
    values: b.min.map((v, i) => (v + b.max[i]!) / 2),
  };
}
