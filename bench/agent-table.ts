// The agent bench's table: what each path's count and acknowledgment mean, the median of a case's repetitions,
// and ratios only between rows that count at the same point (counts_at).
import type { Durability } from "../cloud/database/db.js";
import { INLINE_MAX } from "../cloud/measurements/storage/payload-files.js";
import { JOURNAL_CHUNK_MAX_BYTES } from "../cloud/measurements/ingest/upstream-store.js";
import { formatTable, type Row } from "../runtime/device-bench/table.js";

/**
 * Where a point is counted, for ours and the peers alike (the peers' consumer stores with the cloud's code,
 * bench/peers/sink.ts): at the SQLite commit of its chunk. power-loss durability (`synchronous = FULL`)
 * fsyncs the WAL at every commit; process-crash (`NORMAL`) does not, but a chunk larger than INLINE_MAX goes to
 * a payload file that is fdatasync'ed before its row commits, whatever the durability.
 */
export function countsAt(durability: Durability, chunkBytes: number): string {
  if (durability === "power-loss") return "sqlite-commit+fsync";
  return chunkBytes > INLINE_MAX ? "sqlite-commit+payload-fsync" : "sqlite-commit";
}

/** Where ours counts a chunk that its ingest journal takes (on by default; docs/measurements.md). */
export function journalCountsAt(durability: Durability): string {
  return durability === "power-loss" ? "journal record + fdatasync" : "journal record";
}

/** Where ours counts a chunk of this size: its journal takes chunks up to 16 KiB unless CLOUD_INGEST_JOURNAL=off. */
export function oursCountsAt(durability: Durability, chunkBytes: number): string {
  const journaled = process.env.CLOUD_INGEST_JOURNAL !== "off" && chunkBytes <= JOURNAL_CHUNK_MAX_BYTES;
  return journaled ? journalCountsAt(durability) : countsAt(durability, chunkBytes);
}

/**
 * What the sender's acknowledgment promised. Ours: the cloud acks a chunk after its commit, so its durability.
 * mosquitto: a PUBACK once the broker holds the message in memory (persistence is a periodic snapshot).
 * NATS JetStream (file storage): the ack follows the write to the stream's file, not an fsync (the server
 * syncs on an interval), so it survives the server's crash, not a power cut.
 */
export function ackMeans(path: string, durability: Durability): string {
  if (path.startsWith("ours/")) return durability === "power-loss" ? "power-loss-safe" : "process-crash-safe";
  if (path.startsWith("mosquitto")) return "memory";
  if (path.startsWith("nats")) return "process-crash-safe";
  throw new Error(`no acknowledgment meaning known for the path ${path}`);
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : NaN);

/**
 * One row for a case's repetitions: the repetition with the median points/s (the lower middle one for an even
 * count) with its other figures, and the spread of points/s. Failed repetitions (no points/s) are left out of
 * the median and counted.
 */
export function medianRow(reps: readonly Row[]): Row {
  if (reps.length === 0) throw new Error("a case without repetitions");
  const ok = reps
    .filter((r) => Number.isFinite(num(r.points_per_s)))
    .sort((a, b) => num(a.points_per_s) - num(b.points_per_s));
  const failed = reps.length - ok.length;
  if (ok.length === 0) return { ...reps[0]!, reps: reps.length };
  const mid = ok[Math.floor((ok.length - 1) / 2)]!;
  const notes = [...new Set(reps.map((r) => r.note).filter((n): n is string => typeof n === "string" && n !== ""))];
  if (failed) notes.push(`${failed} of ${reps.length} repetitions failed`);
  const row: Row = {
    ...mid,
    reps: reps.length,
    points_per_s_min: ok[0]!.points_per_s,
    points_per_s_max: ok[ok.length - 1]!.points_per_s,
    note: notes.join("; ") || undefined,
  };
  if (!row.note) delete row.note;
  return row;
}

export interface Ratio {
  /** The metric: points/s (ours ÷ theirs, > 1 = ours ahead) or p99 latency (ours ÷ theirs, < 1 = ours ahead). */
  of: "points/s" | "p99_ms";
  /** Row numbers (1-based, as printed): ours, and the peer row it is compared with. */
  row: number;
  versus: number;
  value: number;
  counts_at: string;
}

export interface Skipped {
  row: number;
  versus: number;
  why: string;
}

const sameCase = (a: Row, b: Row) => a.case === b.case && a.payload_B === b.payload_B && a.rate === b.rate;

/** Ours ÷ each peer row of the same case, only where both count at the same point; the others are listed as skipped. */
export function ratios(rows: readonly Row[]): { ratios: Ratio[]; skipped: Skipped[] } {
  const out: Ratio[] = [];
  const skipped: Skipped[] = [];
  rows.forEach((o, i) => {
    if (!String(o.path).startsWith("ours/")) return;
    rows.forEach((t, j) => {
      if (String(t.path).startsWith("ours/") || !sameCase(o, t)) return;
      if (o.counts_at !== t.counts_at)
        return void skipped.push({
          row: i + 1,
          versus: j + 1,
          why: `counts_at ${String(o.counts_at)} vs ${String(t.counts_at)}`,
        });
      const of = o.case === "latency" ? "p99_ms" : "points/s";
      const key = of === "p99_ms" ? "p99_ms" : "points_per_s";
      const v = num(o[key]) / num(t[key]);
      if (Number.isFinite(v))
        out.push({ of, row: i + 1, versus: j + 1, value: +v.toFixed(2), counts_at: String(o.counts_at) });
    });
  });
  return { ratios: out, skipped };
}

const COLUMNS = [
  "#",
  "case",
  "path",
  "payload_B",
  "points_per_message",
  "reps",
  "seconds",
  "points_per_s",
  "min-max",
  "MB_per_s",
  "p50_ms",
  "p99_ms",
  "counts_at",
  "ack_means",
  "load1",
];

/** The printed table: numbered rows, then each ratio naming the two rows it compares, then the notes. */
export function formatAgentTable(rows: readonly Row[], r = ratios(rows)): string {
  const shown = rows.map((row, i) => ({
    ...row,
    "#": i + 1,
    "min-max":
      row.points_per_s_min !== undefined
        ? `${String(row.points_per_s_min)}-${String(row.points_per_s_max)}`
        : undefined,
  })) as Row[];
  const label = (n: number) => {
    const row = rows[n - 1]!;
    return `#${n} ${String(row.path)} ${String(row.payload_B)} B${row.case === "latency" ? ` at ${String(row.rate)} points/s` : ""}`;
  };
  const lines = [
    formatTable(
      shown,
      COLUMNS.filter((c) => shown.some((s) => s[c] !== undefined)),
    ),
    "",
  ];
  for (const x of r.ratios)
    lines.push(`ratio of ${x.of}: ${label(x.row)} ÷ ${label(x.versus)} = ${x.value} (both counted at ${x.counts_at})`);
  for (const s of r.skipped) lines.push(`not compared: ${label(s.row)} with ${label(s.versus)}: ${s.why}`);
  rows.forEach((row, i) => row.note && lines.push(`note (#${i + 1}): ${String(row.note)}`));
  return lines.join("\n");
}
