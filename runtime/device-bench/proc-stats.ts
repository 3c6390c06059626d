// CPU time and memory of a process from /proc (Linux): what each process of a benchmark case costs.
import fs from "node:fs";
import os from "node:os";

const TICKS_PER_S = 100; // USER_HZ: 100 on every Linux architecture Node runs on

export interface ProcSample {
  /** User + system CPU seconds since the process started. */
  cpuS: number;
  /** Peak resident set size (VmHWM), MiB. */
  peakRssMiB: number;
}

/** A sample of the process, or undefined when it is gone (or /proc is not there). */
export function sampleProc(pid: number): ProcSample | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces: fields are counted after its closing parenthesis.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cpuS = (Number(f[11]) + Number(f[12])) / TICKS_PER_S; // utime, stime (fields 14, 15)
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    return { cpuS, peakRssMiB: hwm ? Number(hwm[1]) / 1024 : 0 };
  } catch {
    return undefined;
  }
}

/** The current resident set size (VmRSS) of a process, MiB, or undefined when it is gone. */
export function currentRssMiB(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The anonymous and file-backed parts of a process's RSS (RssAnon, RssFile), MiB: a file mapped into memory (the
 * agent's LMDB queue) counts in the second, which the kernel can drop; growth of the first is memory the process
 * holds. Undefined when the process is gone.
 */
export function rssPartsMiB(pid: number): { anon: number; file: number } | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const anon = /RssAnon:\s+(\d+) kB/.exec(status);
    const file = /RssFile:\s+(\d+) kB/.exec(status);
    return anon && file ? { anon: Number(anon[1]) / 1024, file: Number(file[1]) / 1024 } : undefined;
  } catch {
    return undefined;
  }
}

/** Resets the peak RSS (VmHWM) to the current RSS, so a reused process reports the peak of this case only. */
export function resetPeakRss(pid: number): void {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // not permitted (not our process, or an old kernel): the lifetime peak is reported
  }
}

/** CPU and peak RSS of a process over a window: start() when the case starts, stop() just before ending it. */
export class ProcWatch {
  private start: ProcSample | undefined;
  private peak = 0;
  private timer: NodeJS.Timeout | undefined;
  result: { cpuS: number; peakRssMiB: number } | undefined;

  constructor(
    readonly label: string,
    readonly pid: number,
  ) {}

  begin(): this {
    resetPeakRss(this.pid);
    this.start = sampleProc(this.pid);
    // A process that exits on its own (the connector at --count) takes its figures with it: keep the last.
    this.timer = setInterval(() => this.take(), 250);
    this.timer.unref();
    return this;
  }

  private take(): ProcSample | undefined {
    const s = sampleProc(this.pid);
    if (s && this.start) {
      this.peak = Math.max(this.peak, s.peakRssMiB);
      this.result = { cpuS: s.cpuS - this.start.cpuS, peakRssMiB: this.peak };
    }
    return s;
  }

  end(): { cpuS: number; peakRssMiB: number } | undefined {
    clearInterval(this.timer);
    this.take();
    return this.result;
  }
}

export const loadAverage = () => os.loadavg().map((l) => +l.toFixed(2));

/** A process and its children (e.g. PostgreSQL's postmaster and its backends), from /proc. */
export function processTree(root: number): number[] {
  const out = [root];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === root) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU seconds of a process tree over a window: processes started meanwhile count whole, ones that ended are lost. */
export class TreeCpuWatch {
  private start = new Map<number, number>();
  constructor(readonly root: number) {}

  private sample(): Map<number, number> {
    const m = new Map<number, number>();
    for (const pid of processTree(this.root)) {
      const s = sampleProc(pid);
      if (s) m.set(pid, s.cpuS);
    }
    return m;
  }

  begin(): this {
    this.start = this.sample();
    return this;
  }

  end(): number {
    let cpuS = 0;
    for (const [pid, s] of this.sample()) cpuS += s - (this.start.get(pid) ?? 0);
    return cpuS;
  }
}
