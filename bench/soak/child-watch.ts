// A process the soak keeps alive: every exit it did not ask for is a crash, counted, and the process is started
// again so the run goes on. Each start is a new life (its own pid) for the RSS and descriptor slopes.
import type { ChildProcess } from "node:child_process";
import { exited } from "../../runtime/device-bench/children.js";

export interface Life {
  pid: number;
  startedMs: number;
}

export class Kept<T extends { child: ChildProcess }> {
  current: T | undefined;
  readonly lives: Life[] = [];
  readonly crashes: string[] = [];
  private expecting = false;

  constructor(
    readonly role: string,
    private readonly launch: () => Promise<T>,
    private readonly t0Ms: number,
    /** Started again after a crash (false: left down, e.g. a connector whose sequence would start over). */
    private readonly restartOnCrash = true,
  ) {}

  get pid(): number | undefined {
    const c = this.current?.child;
    return c && c.exitCode === null && c.signalCode === null ? c.pid : undefined;
  }

  async start(): Promise<T> {
    const got = await this.launch();
    this.current = got;
    this.expecting = false;
    this.lives.push({ pid: got.child.pid!, startedMs: Date.now() });
    got.child.once("exit", (code, signal) => {
      if (this.expecting || this.current !== got) return;
      const at = Math.round((Date.now() - this.t0Ms) / 1000);
      this.crashes.push(`${this.role} exited by itself (${signal ?? `code ${code}`}) at ${at} s`);
      if (!this.restartOnCrash) return;
      // Started again so the run goes on.
      setTimeout(
        () => void this.start().catch((e) => this.crashes.push(`${this.role} did not start again: ${e}`)),
        1000,
      );
    });
    return got;
  }

  /** Stops it with `signal` (an exit the soak asked for), waiting for the exit (SIGKILL after `graceMs`). */
  async stop(signal: NodeJS.Signals, graceMs = 15_000): Promise<{ forced: boolean }> {
    const c = this.current?.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return { forced: false };
    this.expecting = true;
    process.kill(c.pid!, signal);
    let forced = false;
    const timer = setTimeout(() => {
      forced = true;
      try {
        process.kill(c.pid!, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }, graceMs);
    await exited(c);
    clearTimeout(timer);
    return { forced };
  }
}
