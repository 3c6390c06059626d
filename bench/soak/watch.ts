// Every process's RSS and open descriptors, sampled every few seconds by role; a restarted process is a new
// life. A role's slope is read from its longest life, after that life's warm-up and once its bounded caches are
// full, so a restart's fresh heap does not pass for a fall, nor a leak's rise for a start-up, nor a cache filling
// to its size for a leak.
import fs from "node:fs";
import { currentRssMiB } from "../../runtime/device-bench/proc-stats.js";
import { slopePerMinute } from "../steady.js";

/**
 * A bounded cache a process fills as data is written (a SQLite cloud's page cache: its database file's pages):
 * `written()` is how far the data has grown (bytes), and the cache is full once it grew by `bytes` in the life.
 */
export interface FillingCache {
  bytes: number;
  written(): number | undefined;
}

interface LifeSamples {
  pid: number;
  /** [seconds since the life's first sample, RSS MiB, descriptors] */
  samples: Array<[number, number, number]>;
  firstMs: number;
  /** What the cache's data held at the life's first sample. */
  writtenAtStart?: number;
  /** Seconds into the life when its cache was full (undefined: not yet; 0: it has none). */
  fullAtS?: number;
}

export interface Slope {
  role: string;
  /** Seconds of samples the slope is read from (the longest life after its warm-up and its cache's filling). */
  span_s: number;
  /** Seconds into that life where the samples begin: the warm-up, or later when a cache was still filling. */
  from_s: number | null;
  rss_first_MiB: number | null;
  rss_last_MiB: number | null;
  /** The judged slope: Theil-Sen's (the median of the slopes between every two samples). */
  rss_MiB_per_h: number | null;
  /** The least-squares slope, for comparison: a few minutes' dip or bump moves it, a steady growth moves both. */
  rss_least_squares_MiB_per_h: number | null;
  fd_first: number | null;
  fd_last: number | null;
  fd_per_h: number | null;
  lives: number;
}

type Sample = [number, number, number];

function fdCount(pid: number): number | undefined {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

export class ProcessWatch {
  private readonly roles = new Map<string, LifeSamples[]>();

  constructor(private readonly caches: Record<string, FillingCache> = {}) {}

  sample(pids: Record<string, number | undefined>): void {
    const now = Date.now();
    for (const [role, pid] of Object.entries(pids)) {
      if (pid === undefined) continue;
      const rss = currentRssMiB(pid);
      const fds = fdCount(pid);
      if (rss === undefined || fds === undefined) continue;
      const lives = this.roles.get(role) ?? [];
      this.roles.set(role, lives);
      let life = lives[lives.length - 1];
      if (life?.pid !== pid) lives.push((life = { pid, samples: [], firstMs: now }));
      const t = (now - life.firstMs) / 1000;
      life.samples.push([t, rss, fds]);
      this.follow(this.caches[role], life, t);
    }
  }

  private follow(cache: FillingCache | undefined, life: LifeSamples, t: number): void {
    if (cache === undefined) return void (life.fullAtS = 0);
    if (life.fullAtS !== undefined) return;
    const written = cache.written();
    if (written === undefined) return;
    life.writtenAtStart ??= written;
    if (written - life.writtenAtStart >= cache.bytes) life.fullAtS = t;
  }

  slopes(warmupS: number): Slope[] {
    const out: Slope[] = [];
    for (const [role, lives] of this.roles) {
      let best: Sample[] = [];
      let from: number | null = null;
      for (const l of lives) {
        if (l.fullAtS === undefined) continue;
        const start = Math.max(warmupS, l.fullAtS);
        const after = l.samples.filter(([t]) => t >= start);
        if (from === null || span(after) > span(best)) [best, from] = [after, start];
      }
      const perH = (i: 1 | 2, slopeOf = theilSenPerMinute) => {
        const s = slopeOf(best.map((x) => [x[0], x[i]] as const));
        return best.length >= 3 && Number.isFinite(s) ? +(s * 60).toFixed(i === 1 ? 2 : 1) : null;
      };
      out.push({
        role,
        span_s: Math.round(span(best)),
        from_s: from === null ? null : Math.round(from),
        rss_first_MiB: best[0] ? +best[0][1].toFixed(1) : null,
        rss_last_MiB: best.at(-1) ? +best.at(-1)![1].toFixed(1) : null,
        rss_MiB_per_h: perH(1),
        rss_least_squares_MiB_per_h: perH(1, slopePerMinute),
        fd_first: best[0]?.[2] ?? null,
        fd_last: best.at(-1)?.[2] ?? null,
        fd_per_h: perH(2),
        lives: lives.length,
      });
    }
    return out;
  }
}

const span = (s: Sample[]) => (s.length < 2 ? 0 : s.at(-1)![0] - s[0]![0]);

/**
 * Theil-Sen's slope per minute: the median of the slopes between every two samples. V8 shrinks its young generation
 * for a minute or two after a quiet spell (tens of MiB of RSS that come back as the space is used again); such a
 * dip near a window's end or start tilts a least-squares line by MiB per hour, while a growth that lasts moves most
 * pairs and so the median as much as the line.
 */
export function theilSenPerMinute(points: ReadonlyArray<readonly [number, number]>): number {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++)
    for (let j = i + 1; j < points.length; j++) {
      const dt = points[j]![0] - points[i]![0];
      if (dt > 0) slopes.push((points[j]![1] - points[i]![1]) / dt);
    }
  if (slopes.length === 0) return NaN;
  slopes.sort((a, b) => a - b);
  const m = slopes.length >> 1;
  return (slopes.length % 2 ? slopes[m]! : (slopes[m - 1]! + slopes[m]!) / 2) * 60;
}
