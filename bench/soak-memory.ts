// Memory soak: the agent path (sample connector -> FIFO -> edge agent -> iSCP over WebSocket -> cloud peer -> SQLite,
// runtime/device-bench/agent-case.ts) at a small steady rate for --duration seconds (default 300), watching memory: every
// --interval seconds (default 10) the agent's RSS (from /proc: all, anonymous, file-backed), heap, external memory and ArrayBuffers (from its
// metrics) and the cloud's RSS, printed as they come. The row gives each figure's slope (MiB/min, least squares
// after the warm-up: the first --warmup seconds, default 60) and its first and last value. A logger that runs
// for weeks needs every slope near 0; this is the measurement, not a test (a loaded machine moves the figures).
//   npm run bench -- soak-memory [--duration 300] [--rate 1000] [--interval 10] [--warmup 60]
import fs from "node:fs";
import type { ApiClient } from "../runtime/cli/client.js";
import { runAgentCase } from "../runtime/device-bench/agent-case.js";
import { currentRssMiB, loadAverage } from "../runtime/device-bench/proc-stats.js";
import { positive } from "./edges-load.js";
import { isMain, report, type ReportExtras, type Row } from "./lib.js";
import { slopePerMinute } from "./steady.js";

const MiB = 1024 * 1024;
/** The agent's metrics to follow, by the column they fill. */
const AGENT_METRICS: Record<string, string> = {
  agent_heap: "nodejs_heap_size_used_bytes",
  agent_external: "nodejs_external_memory_bytes",
  agent_array_buffers: "agent_array_buffers_bytes",
};

export interface SoakOptions {
  durationS: number;
  rate: number;
  intervalS: number;
  warmupS: number;
}

export function options(): SoakOptions {
  return {
    durationS: positive("duration", 300),
    rate: positive("rate", 1000),
    intervalS: positive("interval", 10),
    warmupS: positive("warmup", 60),
  };
}

/** The values of the named unlabelled series in a Prometheus text exposition. */
function metricValues(text: string, names: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const [name, value] = line.split(" ");
    if (name !== undefined && names.includes(name)) out[name] = Number(value);
  }
  return out;
}

/** RssAnon and RssFile (the LMDB map, the code) of a process, MiB: which part of its RSS moves. */
function rssParts(pid: number): { anon?: number; file?: number } {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) / 1024;
    return { anon: kib("RssAnon"), file: kib("RssFile") };
  } catch {
    return {};
  }
}

async function agentMemory(api: ApiClient): Promise<Record<string, number>> {
  const r = await api.request("GET", "/metrics");
  const got = metricValues(String(r.body), Object.values(AGENT_METRICS));
  const out: Record<string, number> = {};
  for (const [column, metric] of Object.entries(AGENT_METRICS))
    if (got[metric] !== undefined) out[column] = got[metric]! / MiB;
  return out;
}

export async function run(o: SoakOptions = options()): Promise<{ rows: Row[] } & ReportExtras> {
  const load = loadAverage();
  process.stderr.write(
    `soak bench: ${o.rate} points/s for ${o.durationS} s, a sample every ${o.intervalS} s (load average ${load.join(" ")})\n`,
  );
  const series: Record<string, Array<[number, number]>> = {};
  const add = (name: string, t: number, v: number | undefined) => {
    if (v !== undefined && Number.isFinite(v)) (series[name] ??= []).push([t, +v.toFixed(2)]);
  };
  let timer: NodeJS.Timeout | undefined;
  const result = await runAgentCase({
    transport: "websocket",
    payload: 16,
    rate: o.rate,
    durationS: o.durationS,
    onWatching: (pids, api) => {
      const t0 = Date.now();
      const take = async () => {
        const t = +((Date.now() - t0) / 1000).toFixed(1);
        add("agent_rss", t, currentRssMiB(pids.agent!));
        const parts = rssParts(pids.agent!);
        add("agent_rss_anon", t, parts.anon);
        add("agent_rss_file", t, parts.file);
        add("cloud_rss", t, pids.cloud === undefined ? undefined : currentRssMiB(pids.cloud));
        for (const [k, v] of Object.entries(await agentMemory(api).catch(() => ({})))) add(k, t, v);
        const now = Object.entries(series)
          .map(([k, s]) => `${k} ${s[s.length - 1]?.[1]}`)
          .join(", ");
        process.stderr.write(`soak bench: ${t} s: ${now} (MiB; load ${loadAverage()[0]})\n`);
      };
      void take();
      timer = setInterval(() => void take(), o.intervalS * 1000);
    },
  }).finally(() => clearInterval(timer));
  const row: Row = {
    path: result.path,
    rate: o.rate,
    duration_s: o.durationS,
    sent: result.sent,
    stored: result.stored,
  };
  for (const [name, s] of Object.entries(series)) {
    const w = s.filter(([t]) => t >= Math.min(o.warmupS, o.durationS / 2));
    const slope = slopePerMinute(w);
    row[`${name}_slope_MiB_per_min`] = Number.isFinite(slope) ? +slope.toFixed(3) : null;
    row[`${name}_first_MiB`] = w[0]?.[1] ?? null;
    row[`${name}_last_MiB`] = w[w.length - 1]?.[1] ?? null;
  }
  row.load1 = loadAverage()[0];
  if (result.note) row.note = result.note;
  // Printed one figure a line: the row is too wide for a table.
  const lines = Object.keys(series).map(
    (name) =>
      `  ${name.padEnd(22)} ${String(row[`${name}_first_MiB`]).padStart(9)} -> ${String(row[`${name}_last_MiB`]).padStart(9)} MiB, slope ${row[`${name}_slope_MiB_per_min`]} MiB/min`,
  );
  const text = [
    `${result.path}: ${o.rate} points/s for ${o.durationS} s, ${result.stored} of ${result.sent} stored (load ${load.join(" ")} at start, ${row.load1} at end)`,
    `after the first ${Math.min(o.warmupS, o.durationS / 2)} s:`,
    ...lines,
    ...(result.note ? [`  note: ${result.note}`] : []),
  ].join("\n");
  return { rows: [row], text, extra: { load_at_start: load, memory_series_MiB: series } };
}

if (isMain(import.meta.url)) {
  const got = await run();
  console.log(`results: ${report("soak-memory", got.rows, got)}`);
}
