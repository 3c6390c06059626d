// What `edge-agent bench` concludes, in words, under its table: the rate this device sustains, whether it meets
// a target rate, what the latency figures measure, and why the figures may be low (a busy machine, a cloud
// peer sharing the device's CPU).
import type { CaseResult, Transport } from "./agent-case.js";

export interface VerdictContext {
  transport: Transport;
  flush: "interval" | "immediately";
  /** The remote cloud's URL (--server), or undefined for a cloud peer started on this device. */
  server?: string;
  /** --target-rate: points/s the device must sustain. */
  targetRate?: number;
}

/** 2.8 M, 850 k, 950: two significant figures from 1000 on. */
export function formatRate(n: number): string {
  const sig = (v: number) => String(+v.toPrecision(2));
  if (n >= 1e6) return `${sig(n / 1e6)} M`;
  if (n >= 1e3) return `${sig(n / 1e3)} k`;
  return String(Math.round(n));
}

const where = (c: VerdictContext) =>
  `${c.server ? `to the cloud at ${c.server}` : "to a local cloud peer"} (${c.transport})`;
const kept = (r: CaseResult) => r.stored >= r.sent && r.pointsPerS >= r.rate * 0.95;

/**
 * The verdict: from the as-fast-as-possible run when there is one, else from the fixed-rate run (which shows
 * only whether the device kept up with that rate).
 */
export function verdictLines(results: CaseResult[], c: VerdictContext): string[] {
  const max = results.find((r) => r.rate === 0);
  const fixed = results.find((r) => r.rate > 0);
  const payload = `${(max ?? fixed)?.payloadB}-byte payloads`;
  const lines: string[] = [];
  if (max) lines.push(`this device sustains about ${formatRate(max.pointsPerS)} points/s of ${payload} ${where(c)}`);
  else if (fixed)
    lines.push(
      kept(fixed)
        ? `this device kept up with ${formatRate(fixed.rate)} points/s of ${payload} ${where(c)} (run without --rate for its maximum)`
        : `this device did NOT keep up with ${formatRate(fixed.rate)} points/s of ${payload} ${where(c)}: ${formatRate(fixed.pointsPerS)} points/s, ${fixed.stored} of ${fixed.sent} points stored`,
    );
  const target = c.targetRate;
  if (target !== undefined && target > 0) {
    if (max) {
      const ratio = max.pointsPerS / target;
      lines.push(
        ratio >= 1
          ? `target ${formatRate(target)} points/s: met, with a margin of ${Math.round((ratio - 1) * 100)} % (${ratio.toFixed(1)}× the target)`
          : `target ${formatRate(target)} points/s: NOT met: the device reaches ${Math.round(ratio * 100)} % of it`,
      );
    } else if (fixed) {
      const ok = kept(fixed) && fixed.rate >= target;
      lines.push(
        ok
          ? `target ${formatRate(target)} points/s: met at ${formatRate(fixed.rate)} points/s (margin unknown: run without --rate)`
          : kept(fixed)
            ? `target ${formatRate(target)} points/s: not tested (the run offered ${formatRate(fixed.rate)} points/s; run without --rate)`
            : `target ${formatRate(target)} points/s: NOT met`,
      );
    }
  }
  const lat = results.find((r) => r.latency);
  if (lat?.latency) {
    const flush =
      c.flush === "interval"
        ? "flush_policy interval (chunks sent every 5 ms)"
        : "flush_policy immediately (a chunk per write)";
    const what = c.server
      ? `FIFO write to the cloud counting the point (${lat.latency.method})`
      : "FIFO write to the cloud's commit of the point (SQLite)";
    if (Number.isFinite(lat.latency.p50Ms))
      lines.push(
        `latency at ${formatRate(lat.rate)} points/s: p50 ${lat.latency.p50Ms} ms, p99 ${lat.latency.p99Ms} ms, measured from ${what}, with ${flush}`,
      );
    // Every point fell in the first second, which the latency case leaves out as warm-up.
    else
      lines.push(
        `latency at ${formatRate(lat.rate)} points/s: no sample after the 1 s warm-up (run with --duration 2 or more)`,
      );
  }
  if (!c.server)
    lines.push(
      "note: the cloud peer ran on this device and shared its CPU (cpu_cloud_%): a separate cloud (--server URL) leaves the device more",
    );
  return lines;
}

/** A warning when the machine was busy at the start (load average above half the cores), else undefined. */
export function loadWarning(load1: number, cores: number): string | undefined {
  if (!(load1 > 0.5 * cores)) return undefined;
  return `warning: load average ${load1.toFixed(2)} on ${cores} cores at the start: other processes compete for the CPU, so these figures may be low and vary between runs`;
}

/** Word-wraps `line` at `width` columns, continuation lines indented by two spaces. */
export function wrap(line: string, width = 100): string[] {
  const out: string[] = [];
  let cur = "";
  for (const word of line.split(" ")) {
    const next = cur === "" ? word : `${cur} ${word}`;
    if (next.length > width && cur.trim() !== "") {
      out.push(cur);
      cur = `  ${word}`;
    } else cur = next;
  }
  out.push(cur);
  return out;
}
