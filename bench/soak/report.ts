// The soak's targets and its report: one row per transport and backend, judged against the targets (0 lost,
// 0 duplicated, 0 crashes, live data back within LIVE_GAP_TARGET_S of every fault's end; on long runs the RSS
// slope of the agent and the cloud under RSS_SLOPE_TARGET MiB/h). A missed target makes the row's note start
// with "failed:", which makes `npm run bench` exit non-zero.
import type { Row } from "../lib.js";
import type { SoakOptions } from "./options.js";
import type { RowResult } from "./row.js";

export const LIVE_GAP_TARGET_S = 10;
export const RSS_SLOPE_TARGET_MiB_PER_H = 1;

/** The targets a row missed, in words. */
export function missed(r: RowResult, o: SoakOptions): string[] {
  const out: string[] = [];
  if (r.lost === null) out.push("the agent's queue did not drain: lost points cannot be counted");
  else if (r.lost > 0)
    out.push(`${r.lost} acknowledged points not stored (first missing: ${r.stored.firstMissing.join(", ")})`);
  if (r.stored.duplicated > 0) out.push(`${r.stored.duplicated} points stored twice or more`);
  if (r.stored.unknown > 0) out.push(`${r.stored.unknown} stored points the connector never wrote`);
  if (r.crashes.length) out.push(`crashes: ${r.crashes.join("; ")}`);
  for (const f of r.faults) {
    if (f.error) out.push(`${f.fault} at ${f.at_s} s could not be injected: ${f.error}`);
    else if (f.live_gap_s === null) out.push(`no live data after ${f.fault} at ${f.at_s} s`);
    else if (f.live_gap_s > LIVE_GAP_TARGET_S)
      out.push(`live data back ${f.live_gap_s} s after ${f.fault} at ${f.at_s} s`);
  }
  if (o.durationS >= o.judgeSlopesFromS)
    for (const s of r.slopes) {
      if (s.role !== "agent" && !s.role.startsWith("cloud")) continue;
      if (s.rss_MiB_per_h === null)
        out.push(
          s.from_s === null
            ? `${s.role} RSS not judged: its cache never filled in a life`
            : `${s.role} RSS not judged: no life ran long enough after ${s.from_s} s`,
        );
      else if (s.rss_MiB_per_h >= RSS_SLOPE_TARGET_MiB_PER_H) out.push(`${s.role} RSS grows ${s.rss_MiB_per_h} MiB/h`);
    }
  return out;
}

export function toRow(r: RowResult, o: SoakOptions): Row {
  const gaps = r.faults.map((f) => f.live_gap_s);
  const fails = missed(r, o);
  const row: Row = {
    path: r.row,
    rate: r.rate,
    duration_s: r.duration_s,
    faults: r.faults.length,
    sent: r.sent,
    accepted: r.accepted,
    acknowledged: r.acknowledged,
    stored: r.stored.stored,
    lost: r.lost,
    duplicated: r.stored.duplicated,
    crashes: r.crashes.length,
    max_live_gap_s: gaps.some((g) => g === null) ? null : Math.max(0, ...(gaps as number[])),
    fault_log: r.faults,
    slopes: r.slopes,
    viewer_connects: r.viewer_connects,
    load: r.load,
  };
  const notes = [...(fails.length ? [`failed: ${fails.join("; ")}`] : []), ...r.notes];
  if (notes.length) row.note = notes.join("; ");
  return row;
}

/** The printed form: a summary line per row, its faults' live gaps, its processes' slopes. */
export function text(rows: RowResult[], o: SoakOptions): string {
  const lines: string[] = [];
  for (const r of rows) {
    const lost = r.lost === null ? "?" : r.lost;
    lines.push(
      `${r.row}: ${r.rate} points/s for ${r.duration_s} s, ${r.faults.length} faults; sent ${r.sent}, accepted ${r.accepted}, ` +
        `acknowledged ${r.acknowledged ?? "?"}, stored ${r.stored.stored}, lost ${lost}, duplicated ${r.stored.duplicated}, ` +
        `crashes ${r.crashes.length} (load ${r.load.start.join(" ")} at start, ${r.load.end.join(" ")} at end)`,
    );
    const byKind = new Map<string, Array<number | null>>();
    for (const f of r.faults) byKind.set(f.fault, [...(byKind.get(f.fault) ?? []), f.live_gap_s]);
    for (const [k, g] of byKind)
      lines.push(
        `  ${k.padEnd(14)} live data back after ${g.map((x) => (x === null ? "never" : `${x} s`)).join(", ")}`,
      );
    for (const s of r.slopes)
      lines.push(
        `  ${s.role.padEnd(10)} RSS ${s.rss_first_MiB} -> ${s.rss_last_MiB} MiB (${s.rss_MiB_per_h} MiB/h; least squares ${s.rss_least_squares_MiB_per_h}), fds ${s.fd_first} -> ${s.fd_last} (${s.fd_per_h}/h) over ${s.span_s} s of ${s.lives} life/lives (from ${s.from_s ?? "-"} s into it)`,
      );
    for (const m of missed(r, o)) lines.push(`  MISSED: ${m}`);
    for (const n of r.notes) lines.push(`  note: ${n}`);
  }
  if (o.durationS < o.judgeSlopesFromS)
    lines.push(`(slopes are reported, judged only on runs of ${o.judgeSlopesFromS} s or more)`);
  return lines.join("\n");
}
