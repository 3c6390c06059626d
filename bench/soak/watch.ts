// Every process's RSS and open descriptors, sampled every few seconds by role; a restarted process is a new
// life. A role's slope is read from its longest life, after that life's warm-up, so a restart's fresh heap does
// not pass for a fall (or a leak's rise for a start-up).
import fs from "node:fs";
import { currentRssMiB } from "../../runtime/device-bench/proc-stats.js";
import { slopePerMinute } from "../steady.js";

interface LifeSamples {
  pid: number;
  /** [seconds since the life's first sample, RSS MiB, descriptors] */
  samples: Array<[number, number, number]>;
  firstMs: number;
}

export interface Slope {
  role: string;
  /** Seconds of samples the slope is read from (the longest life after its warm-up). */
  span_s: number;
  rss_first_MiB: number | null;
  rss_last_MiB: number | null;
  rss_MiB_per_h: number | null;
  fd_first: number | null;
  fd_last: number | null;
  fd_per_h: number | null;
  lives: number;
}

function fdCount(pid: number): number | undefined {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

export class ProcessWatch {
  private readonly roles = new Map<string, LifeSamples[]>();

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
      life.samples.push([(now - life.firstMs) / 1000, rss, fds]);
    }
  }

  slopes(warmupS: number): Slope[] {
    const out: Slope[] = [];
    for (const [role, lives] of this.roles) {
      const after = lives.map((l) => l.samples.filter(([t]) => t >= warmupS));
      const best = after.reduce((a, b) => (span(b) > span(a) ? b : a), [] as Array<[number, number, number]>);
      const perH = (i: 1 | 2) => {
        const s = slopePerMinute(best.map((x) => [x[0], x[i]] as const));
        return best.length >= 3 && Number.isFinite(s) ? +(s * 60).toFixed(i === 1 ? 2 : 1) : null;
      };
      out.push({
        role,
        span_s: Math.round(span(best)),
        rss_first_MiB: best[0] ? +best[0][1].toFixed(1) : null,
        rss_last_MiB: best.at(-1) ? +best.at(-1)![1].toFixed(1) : null,
        rss_MiB_per_h: perH(1),
        fd_first: best[0]?.[2] ?? null,
        fd_last: best.at(-1)?.[2] ?? null,
        fd_per_h: perH(2),
        lives: lives.length,
      });
    }
    return out;
  }
}

const span = (s: Array<[number, number, number]>) => (s.length < 2 ? 0 : s.at(-1)![0] - s[0]![0]);
