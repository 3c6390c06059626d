// Benchmark results as table rows (console, JSON) and as aligned plain text (edge-agent bench).
import type { CaseResult } from "./agent-case.js";
import { wrap } from "./verdict.js";

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

/** Aligned text table of rows (columns in first-seen order, or `columns`; empty cells for missing values). */
export function formatTable(rows: Row[], columns?: string[]): string {
  const cols: string[] = columns ? [...columns] : [];
  if (!columns) for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
  const cell = (v: unknown) => (v === undefined ? "" : String(v));
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (i === 0 || cols[i] === "note" ? v.padEnd(width[i]!) : v.padStart(width[i]!)))
      .join("  ")
      .trimEnd();
  return [
    line(cols),
    line(width.map((w) => "-".repeat(w))),
    ...rows.map((r) => line(cols.map((c) => cell(r[c])))),
  ].join("\n");
}

/**
 * The columns `edge-agent bench` shows without --wide, most telling first. The path (transport, flush policy)
 * is the same for every row and named in the verdict; notes are printed under the table.
 */
const NARROW = [
  "rate",
  "payload_B",
  "points_per_s",
  "MB_per_s",
  "p50_ms",
  "p99_ms",
  "cpu_agent_%",
  "rss_agent_MiB",
  "cpu_cloud_%",
  "cpu_connector_%",
];

/** The table in at most `maxWidth` columns: the narrow columns that fit, in order, and the notes below it. */
export function narrowTable(rows: Row[], maxWidth = 100): string {
  const present = NARROW.filter((c) => rows.some((r) => r[c] !== undefined));
  let cols = present;
  let text = formatTable(rows, cols);
  while (cols.length > 1 && Math.max(...text.split("\n").map((l) => l.length)) > maxWidth) {
    cols = cols.slice(0, -1);
    text = formatTable(rows, cols);
  }
  const notes = rows.flatMap((r, i) => (r.note ? wrap(`note (row ${i + 1}): ${String(r.note)}`, maxWidth) : []));
  return [text, ...notes].join("\n");
}
