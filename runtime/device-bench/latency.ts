// Latency samples (ms) and their percentiles, kept in a growing Float64Array (no object per sample), and the
// latency of each point from the connector's write log and the cloud's commit trace.
import fs from "node:fs";

export class LatencySamples {
  private buf = new Float64Array(1 << 14);
  private n = 0;

  add(ms: number): void {
    if (this.n === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = ms;
  }

  get count(): number {
    return this.n;
  }

  summary(): LatencySummary {
    const s = this.buf.slice(0, this.n).sort();
    const at = (q: number) => (this.n === 0 ? NaN : s[Math.min(this.n - 1, Math.floor(q * this.n))]!);
    return { samples: this.n, p50Ms: round(at(0.5)), p99Ms: round(at(0.99)), maxMs: round(at(1)) };
  }
}

export interface LatencySummary {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const round = (v: number) => (Number.isFinite(v) ? +v.toFixed(2) : v);

/** CLOCK_MONOTONIC now, in ns (what the sample connector's --stamp writes). */
export const monoNs = () => Number(process.hrtime.bigint());

/** The --stamp write time of a payload (bytes 8..16, u64 BE ns), or undefined when it has none. */
export function stampOf(payload: Uint8Array): number | undefined {
  if (payload.length < 16) return undefined;
  const v = new DataView(payload.buffer, payload.byteOffset + 8, 8);
  return v.getUint32(0) * 4294967296 + v.getUint32(4);
}

/** The connector's write log (--write-log): first sequence number, points and stamp (ns) of each write. */
export function readWriteLog(file: string): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const [first, n, ns] = line.split(" ").map(Number);
    if (Number.isFinite(first) && Number.isFinite(n) && Number.isFinite(ns)) out.push([first!, n!, ns!]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/**
 * Each point's commit time minus its write stamp (ms), points in order: the k-th point committed is point k
 * (one upstream stores its chunks in order). Points written within `warmupNs` of the first write are left out.
 */
export function commitLatency(
  commits: ReadonlyArray<readonly [number, number]>,
  writes: ReadonlyArray<readonly [number, number, number]>,
  warmupNs: number,
): LatencySamples {
  const s = new LatencySamples();
  const firstNs = writes[0]?.[2] ?? 0;
  let w = 0;
  let k = 0;
  for (const [at, points] of commits) {
    const end = k + points;
    while (k < end && w < writes.length) {
      const [first, n, stamp] = writes[w]!;
      if (k >= first + n) {
        w++;
        continue;
      }
      const upto = Math.min(end, first + n);
      if (stamp - firstNs >= warmupNs) for (let i = Math.max(k, first); i < upto; i++) s.add((at - stamp) / 1e6);
      k = upto;
    }
    k = end;
  }
  return s;
}
