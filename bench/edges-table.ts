// The edges bench's printed table: one line per system and load with the figures a reader compares, what
// counts_at means for each system, ours against the peers and the Node receiver at each load, and the notes.
import { formatTable } from "../runtime/device-bench/table.js";
import { COUNTS_AT_LEGEND } from "./edges-systems.js";
import type { System } from "./edges-senders.js";
import type { Row } from "./lib.js";

const perProcess = (v: unknown) =>
  v && typeof v === "object"
    ? Object.entries(v as Record<string, number | null>)
        .map(([k, x]) => `${k} ${x ?? "?"}`)
        .join(", ")
    : undefined;

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const ratio = (a: unknown, b: unknown) =>
  num(a) !== undefined && num(b) ? +(num(a)! / num(b)!).toFixed(2) : undefined;
const loadOf = (r: Row) => `${r.edges}×${r.rate_per_edge}`;

/** Ours against the better peer (by acked points/s) and the Node receiver, per load. */
export function comparisons(rows: Row[]): string[] {
  const out: string[] = [];
  for (const load of [...new Set(rows.map(loadOf))]) {
    const at = (s: System) =>
      rows.find((r) => loadOf(r) === load && r.system === s && num(r.acked_points_per_s) !== undefined);
    const ours = at("ours");
    if (!ours) continue;
    const parts: string[] = [];
    const peers = [at("mosquitto"), at("nats")].filter((r): r is Row => r !== undefined);
    const best = peers.sort((a, b) => num(b.acked_points_per_s)! - num(a.acked_points_per_s)!)[0];
    if (best)
      parts.push(
        `acked points/s ${ratio(ours.acked_points_per_s, best.acked_points_per_s)}× and p99 ${ratio(ours.p99_ms, best.p99_ms) ?? "?"}× the better peer's (${best.system})`,
      );
    const node = at("node");
    // A row that acked almost nothing has a CPU per chunk of its whole CPU over a handful of chunks: no cost to compare.
    const fewAcked = (r: Row) => num(r.acked_points_per_s)! < 0.1 * (num(r.offered_points_per_s) ?? 0);
    if (node && (fewAcked(ours) || fewAcked(node)))
      parts.push("CPU per chunk not compared with the Node receiver's (one of them acked under 10 % of the offer)");
    else if (node)
      parts.push(`CPU per chunk ${ratio(ours.cpu_us_per_chunk, node.cpu_us_per_chunk) ?? "?"}× the Node receiver's`);
    if (parts.length) out.push(`${load}: ours ${parts.join("; ")}`);
  }
  return out;
}

export function formatEdgesTable(rows: Row[]): string {
  const lines = rows.map((r, i) => ({
    "#": i + 1,
    system: String(r.system),
    "edges×rate": loadOf(r),
    counts_at: r.counts_at as string | undefined,
    offered: num(r.offered_points_per_s),
    sent: num(r.sent_points_per_s),
    acked_points_per_s: num(r.acked_points_per_s),
    chunks_per_s: num(r.acked_chunks_per_s),
    p50_ms: num(r.p50_ms),
    p99_ms: num(r.p99_ms),
    max_ms: num(r.max_ms),
    errors: num(r.errors),
    unacked: num(r.unacked_chunks_at_end),
    "cpu_%": perProcess(r["cpu_%"]),
    cpu_us_per_chunk: num(r.cpu_us_per_chunk),
    "clients_%": num(r["cpu_clients_%"]),
    rss_MiB: perProcess(r.rss_MiB),
    load1: num(r.load1),
  }));
  const systems = [...new Set(rows.map((r) => r.system as System))].filter((s) => s in COUNTS_AT_LEGEND);
  const legend = systems.map((s) => `counts_at, ${s}: ${COUNTS_AT_LEGEND[s]}`);
  const notes = rows.flatMap((r, i) => (r.note ? [`note (row ${i + 1}): ${String(r.note)}`] : []));
  const cpu =
    "cpu_%: each process of the system, % of one core over the window; clients_%: the load generators together (not the system's)";
  return [formatTable(lines), "", ...legend, cpu, ...comparisons(rows), ...notes].join("\n");
}
