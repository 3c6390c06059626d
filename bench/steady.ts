// Steady state: the agent path (sample connector -> FIFO -> edge agent -> iSCP over WebSocket -> cloud peer ->
// SQLite, runtime/device-bench/agent-case.ts) at 16 B payloads for --duration seconds (default 60) at --share
// (default 0.8) of the maximum rate (measured first for --max-duration seconds as fast as possible, or given
// with --rate). The agent's and the cloud's RSS, and its anonymous and file-backed parts, are sampled each second
// while the connector writes; the row gives each one's slope (MiB/min, least squares over the last --window
// seconds, default 50, or over all but the first second in shorter runs) and the points' latency (FIFO write to
// SQLite commit, p50/p99). A flat RSS has a slope near 0; the file-backed part is the agent's LMDB map.
//   npm run bench -- steady [--duration 60] [--window 50] [--rate R | --share 0.8 --max-duration 5]
import { runAgentCase } from "../runtime/device-bench/agent-case.js";
import { currentRssMiB, loadAverage, rssPartsMiB } from "../runtime/device-bench/proc-stats.js";
import { positive } from "./edges-load.js";
import { arg, isMain, report, type ReportExtras, type Row } from "./lib.js";

const SHARE = 0.8;
const SLOPE_WINDOW_S = 50;
/** The series sampled per side: VmRSS and its anonymous and file-backed parts. */
const SERIES = ["agent", "agent_anon", "agent_file", "cloud", "cloud_anon", "cloud_file"] as const;

/** Least-squares slope of [t (s), v] pairs, per minute; NaN with fewer than 2 distinct times. */
export function slopePerMinute(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mt = points.reduce((a, [t]) => a + t, 0) / n;
  const mv = points.reduce((a, [, v]) => a + v, 0) / n;
  let num = 0;
  let den = 0;
  for (const [t, v] of points) {
    num += (t - mt) * (v - mv);
    den += (t - mt) ** 2;
  }
  return den === 0 ? NaN : (num / den) * 60;
}

/** The samples of the slope's window: the last `windowS` of the writing, leaving out at least the first second. */
export function slopeWindow(
  samples: ReadonlyArray<readonly [number, number]>,
  durationS: number,
  windowS = SLOPE_WINDOW_S,
): Array<readonly [number, number]> {
  const from = Math.max(1, durationS - windowS);
  return samples.filter(([t]) => t >= from && t <= durationS);
}

export interface SteadyOptions {
  durationS: number;
  /** Points/s to run at; undefined: 80 % of the maximum measured first. */
  rate?: number;
  maxDurationS: number;
  /** Share of the measured maximum to run at (without --rate). */
  share: number;
  /** Seconds at the end of the writing the slopes are taken over. */
  windowS: number;
}

export function options(): SteadyOptions {
  return {
    durationS: positive("duration", 60),
    rate: arg("rate") === undefined ? undefined : positive("rate", 1),
    maxDurationS: positive("max-duration", 5),
    share: Math.min(1, positive("share", SHARE)),
    windowS: positive("window", SLOPE_WINDOW_S),
  };
}

export async function run(o: SteadyOptions = options()): Promise<{ rows: Row[] } & ReportExtras> {
  const load = loadAverage();
  let max: number | undefined;
  if (o.rate === undefined) {
    process.stderr.write(
      `steady bench: measuring the maximum rate for ${o.maxDurationS} s (load average ${load.join(" ")})\n`,
    );
    max = (await runAgentCase({ transport: "websocket", payload: 16, rate: 0, durationS: o.maxDurationS })).pointsPerS;
  }
  const rate = o.rate ?? Math.max(1, Math.round(max! * o.share));
  process.stderr.write(`steady bench: ${rate} points/s for ${o.durationS} s\n`);
  const series = Object.fromEntries(SERIES.map((k) => [k, [] as Array<[number, number]>]));
  let timer: NodeJS.Timeout | undefined;
  const result = await runAgentCase({
    transport: "websocket",
    payload: 16,
    rate,
    durationS: o.durationS,
    latency: true,
    onWatching: (pids) => {
      const t0 = Date.now();
      const take = () => {
        const t = (Date.now() - t0) / 1000;
        for (const side of ["agent", "cloud"]) {
          const pid = pids[side];
          const rss = pid === undefined ? undefined : currentRssMiB(pid);
          const parts = pid === undefined ? undefined : rssPartsMiB(pid);
          const at = +t.toFixed(2);
          if (rss !== undefined) series[side]!.push([at, +rss.toFixed(1)]);
          if (parts !== undefined) {
            series[`${side}_anon`]!.push([at, +parts.anon.toFixed(1)]);
            series[`${side}_file`]!.push([at, +parts.file.toFixed(1)]);
          }
        }
      };
      take();
      timer = setInterval(take, 1000);
    },
  }).finally(() => clearInterval(timer));
  const row: Row = {
    path: result.path,
    payload_B: 16,
    max_points_per_s: max ?? null,
    rate,
    duration_s: o.durationS,
    stored: result.stored,
    p50_ms: result.latency?.p50Ms,
    p99_ms: result.latency?.p99Ms,
  };
  for (const side of SERIES) {
    const s = series[side]!;
    const w = slopeWindow(s, o.durationS, o.windowS);
    const slope = slopePerMinute(w);
    row[`rss_${side}_slope_MiB_per_min`] = Number.isFinite(slope) ? +slope.toFixed(2) : null;
    if (side.includes("_")) continue; // the parts: their slopes only
    row[`rss_${side}_first_MiB`] = w[0]?.[1] ?? null;
    row[`rss_${side}_last_MiB`] = w[w.length - 1]?.[1] ?? null;
    row[`rss_${side}_samples`] = w.length;
  }
  row.load1 = loadAverage()[0];
  if (result.note) row.note = result.note;
  return { rows: [row], extra: { load_at_start: load, rss_series_MiB: series } };
}

if (isMain(import.meta.url)) {
  const got = await run();
  console.log(`results: ${report("steady", got.rows, got)}`);
}
