// Benchmark results as table rows (console, JSON) and as aligned plain text (edge-agent bench).
import type { CaseResult } from "./agent-case.js";

export type Row = Record<string, string | number | boolean | undefined>;

const fix = (v: number | undefined, d = 1) => (v === undefined || !Number.isFinite(v) ? undefined : +v.toFixed(d));

/**
 * With `roles`, ours and the peers share process columns: edge = our agent or a peer's producer, server = our
 * cloud peer or the broker, consumer = a peer's subscriber (ours stores in the cloud: no consumer process).
 */
const ROLES: Record<string, string> = { agent: "edge", producer: "edge", cloud: "server", broker: "server" };

/** One row per case; a CPU and a peak-RSS column per process (connector, agent, cloud; producer, broker, consumer). */
export function caseRow(r: CaseResult, opts: { roles?: boolean } = {}): Row {
  const row: Row = {
    path: r.path,
    payload_B: r.payloadB,
    rate: r.rate === 0 ? "max" : r.rate,
    points: r.stored,
    seconds: r.seconds,
    points_per_s: r.pointsPerS,
    MB_per_s: r.MBPerS,
    p50_ms: r.latency?.p50Ms,
    p99_ms: r.latency?.p99Ms,
  };
  for (const [proc, p] of Object.entries(r.procs)) {
    const name = opts.roles ? (ROLES[proc] ?? proc) : proc;
    // CPU as % of one core over the run (CPU seconds from the first accepted point to the last stored one).
    row[`cpu_${name}_%`] = fix(p && (p.cpuS / r.seconds) * 100, 0);
    row[`rss_${name}_MiB`] = fix(p?.peakRssMiB, 0);
  }
  if (r.note) row.note = r.note;
  return row;
}

/** Aligned text table of rows (columns in first-seen order; empty cells for missing values). */
export function formatTable(rows: Row[]): string {
  const cols: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
  const cell = (v: unknown) => (v === undefined ? "" : String(v));
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => (i === 0 || cols[i] === "note" ? v.padEnd(width[i]!) : v.padStart(width[i]!))).join("  ").trimEnd();
  return [line(cols), line(width.map((w) => "-".repeat(w))), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join("\n");
}
