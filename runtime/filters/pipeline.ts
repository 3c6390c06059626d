// Applies a direction's filter list (upstream or downstream) to batches of points, in the configured order.
// Each filter: points matching `target` get `change_to`; others pass unchanged. A batch is processed
// synchronously, so replacing the list (update()) between two batches never loses or duplicates a point;
// filters whose id and definition did not change keep their counters, and a sampling filter keeps its
// per-data-id last-kept times across every update (new interval, new target, disabled and enabled again)
// until it is deleted or changes kind, so an update never lets a burst of extra points through.
import { type DataPoint, dataIdKey } from "../datapoint.js";
import { ESSENTIAL_NAL_TYPES, NAL_AUD, NAL_SEI, keepNalUnits } from "./h264.js";
import { type Matcher, compilePatterns, dataNameError } from "./pattern.js";
import type { FilterChange, FilterDefinition, FilterTarget } from "./schema.js";

export interface FilterStats {
  matched: number;
  dropped: number;
  changed: number;
  /** rename results that broke the data-name rules (the point kept its name). */
  invalid: number;
}

/** One compiled filter: returns the point (possibly new), or undefined to drop it. */
type Step = (p: DataPoint) => DataPoint | undefined;

interface Compiled {
  id: string;
  json: string;
  match: (p: DataPoint) => boolean;
  step: Step;
  stats: FilterStats;
}

function compileTarget(t: FilterTarget): (p: DataPoint) => boolean {
  if (t.type === "always") return () => true;
  const m: Matcher = compilePatterns(t.patterns);
  if (t.type === "type") return (p) => m(p.type);
  if (t.type === "name") return (p) => m(p.name);
  return (p) => m(p.srcId);
}

const SAMPLING_MAX_IDS = 100_000;

/** Sampling state of one filter: last kept elapsed time per data id. */
type SamplingMemory = Map<string, number>;

function compileChange(c: FilterChange, stats: FilterStats, memory: () => SamplingMemory): Step {
  switch (c.type) {
    case "rename":
      return (p) => {
        let name = p.name;
        if (c.name !== undefined) name = c.name;
        if (c.strip_prefix !== undefined && name.startsWith(c.strip_prefix)) name = name.slice(c.strip_prefix.length);
        if (c.add_prefix !== undefined) name = c.add_prefix + name;
        if (dataNameError(name) !== undefined) {
          stats.invalid++;
          name = p.name;
        }
        const type = c.data_type ?? p.type;
        if (name === p.name && type === p.type) return p;
        stats.changed++;
        return { name, type, payload: p.payload, elapsedNs: p.elapsedNs, srcId: p.srcId };
      };
    case "sampling": {
      const intervalNs = c.interval_ms * 1e6;
      const last = memory();
      return (p) => {
        const key = dataIdKey(p);
        const prev = last.get(key);
        // Keep the first point, points an interval after the last kept one, and points whose time went
        // backwards (a new measurement or a connector clock reset restarts sampling).
        if (prev === undefined || p.elapsedNs - prev >= intervalNs || p.elapsedNs < prev) {
          if (prev === undefined && last.size >= SAMPLING_MAX_IDS) last.clear();
          last.set(key, p.elapsedNs);
          return p;
        }
        stats.dropped++;
        return undefined;
      };
    }
    case "h264-essential-nal-units": {
      const keep = new Set(ESSENTIAL_NAL_TYPES);
      if (c.keep_sei) keep.add(NAL_SEI);
      if (c.keep_aud) keep.add(NAL_AUD);
      return (p) => {
        const payload = keepNalUnits(p.payload, keep);
        if (payload === undefined) {
          stats.dropped++;
          return undefined;
        }
        if (payload === p.payload) return p;
        stats.changed++;
        return { name: p.name, type: p.type, payload, elapsedNs: p.elapsedNs, srcId: p.srcId };
      };
    }
  }
}

export class FilterPipeline {
  private filters: Compiled[] = [];
  private readonly sampling = new Map<string, SamplingMemory>();

  constructor(defs: readonly FilterDefinition[] = []) {
    this.update(defs);
  }

  /** Replaces the filter list. Filters with the same id and definition keep their state and counters. */
  update(defs: readonly FilterDefinition[]): void {
    const old = new Map(this.filters.map((f) => [f.id, f]));
    const next: Compiled[] = [];
    const ids = new Set(defs.map((d) => d.id));
    for (const id of this.sampling.keys()) if (!ids.has(id)) this.sampling.delete(id);
    for (const d of defs) {
      if (d.change_to.type !== "sampling") this.sampling.delete(d.id); // a new change kind starts afresh
      if (!d.enabled) continue;
      const json = JSON.stringify([d.target, d.change_to]);
      const prev = old.get(d.id);
      if (prev !== undefined && prev.json === json) {
        next.push(prev);
        continue;
      }
      const stats: FilterStats = { matched: 0, dropped: 0, changed: 0, invalid: 0 };
      const memory = () => {
        let m = this.sampling.get(d.id);
        if (m === undefined) this.sampling.set(d.id, (m = new Map()));
        return m;
      };
      next.push({
        id: d.id,
        json,
        match: compileTarget(d.target),
        step: compileChange(d.change_to, stats, memory),
        stats,
      });
    }
    this.filters = next;
  }

  get stats(): Record<string, FilterStats> {
    return Object.fromEntries(this.filters.map((f) => [f.id, { ...f.stats }]));
  }

  /** Applies the filters to a batch in place (dropped points are removed) and returns it. */
  apply(points: DataPoint[]): DataPoint[] {
    for (const f of this.filters) {
      const { match, step, stats } = f;
      let j = 0;
      for (let i = 0; i < points.length; i++) {
        const p = points[i]!;
        if (!match(p)) {
          points[j++] = p;
          continue;
        }
        stats.matched++;
        const q = step(p);
        if (q !== undefined) points[j++] = q;
      }
      points.length = j;
    }
    return points;
  }
}
