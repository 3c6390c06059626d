// Starts and supervises a device connector process (`launch` settings): restart per policy with
// exponential backoff, stop with SIGTERM then SIGKILL, and a human-readable exit reason for the state.
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { connectorEnvironment } from "./launch-env.js";
import { killLeftover, writePidFile } from "./pid-file.js";
import type { IpcFormat, Launch } from "./schema.js";

export interface LauncherContext {
  ipcPath: string;
  format: IpcFormat;
  /** Receives each line the connector writes to stdout/stderr; output is discarded when absent. */
  onOutput?: (line: string, stream: "stdout" | "stderr") => void;
  /** Called after every exit, with the reason and whether a restart is scheduled. */
  onExit?: (info: ExitInfo) => void;
  /**
   * Where the running connector's pid is kept (in a directory only the agent may write: pid-file.ts). A
   * connector outlives an agent killed with SIGKILL; the next start finds it here and kills its process
   * group first, so two connectors never share one FIFO. Without it no leftover is looked for.
   */
  pidFile?: string;
  /** Told when a pid file is found but not believed (it names the reason). */
  onNotice?: (message: string) => void;
  /** Variables of the agent's environment the connector gets beyond the allow-list (launch-env.ts). */
  allowEnv?: readonly string[];
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** e.g. "exited with code 1", "killed by signal SIGKILL", "failed to start: spawn x ENOENT". */
  reason: string;
  restartInMs: number | undefined;
}

export interface LauncherState {
  running: boolean;
  pid: number | undefined;
  /** Restarts since the launcher was started. */
  restarts: number;
  lastExit: ExitInfo | undefined;
  /** Gave up restarting (policy `never`/`on-failure` after a clean exit, or max_restarts reached). */
  finished: boolean;
}

export function exitReason(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal !== null) return `killed by signal ${signal}`;
  return `exited with code ${code ?? "unknown"}`;
}

/** Delay before the n-th consecutive restart (n >= 1). */
export function backoffDelay(policy: Launch["restart"], n: number): number {
  const d = policy.initial_backoff_ms * policy.multiplier ** Math.max(0, n - 1);
  return Math.min(Math.round(d), policy.max_backoff_ms);
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    child.kill(signal); // the group is gone already, or was never created
  }
}

export class ConnectorLauncher {
  private child: ChildProcess | undefined;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private consecutive = 0;
  private startedAt = 0;
  private readonly st: LauncherState = {
    running: false,
    pid: undefined,
    restarts: 0,
    lastExit: undefined,
    finished: false,
  };

  constructor(
    private readonly launch: Launch,
    private readonly ctx: LauncherContext,
  ) {}

  get state(): LauncherState {
    return { ...this.st };
  }

  start(): void {
    if (this.ctx.pidFile !== undefined) {
      const r = killLeftover(this.ctx.pidFile, this.ctx.ipcPath);
      if (r.ignored !== undefined) this.ctx.onNotice?.(r.ignored);
    }
    this.stopping = false;
    this.st.finished = false;
    this.spawnOnce();
  }

  /**
   * Stops the connector and cancels pending restarts: waits up to `graceMs` for it to exit by itself
   * (a downstream connector ends at EOF once the agent closed the FIFO), then SIGTERM to its process
   * group, then SIGKILL after stop_timeout_ms.
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    if (graceMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      const gone = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs))),
      ]);
      clearTimeout(timer);
      if (gone) return;
    }
    const kill = setTimeout(() => signalGroup(child, "SIGKILL"), this.launch.stop_timeout_ms);
    signalGroup(child, "SIGTERM");
    await exited;
    clearTimeout(kill);
  }

  /** Marks the launcher as stopping (no restarts) without signalling the connector yet. */
  prepareStop(): void {
    this.stopping = true;
    clearTimeout(this.timer);
  }

  private spawnOnce(): void {
    const path = this.ctx.ipcPath;
    const args = this.launch.args.map((a) => a.split("${ipc.path}").join(path));
    let child: ChildProcess;
    try {
      child = spawn(this.launch.command, args, {
        cwd: this.launch.working_dir,
        env: {
          ...connectorEnvironment(process.env, this.launch.environment, this.ctx.allowEnv),
          EDGE_AGENT_IPC_PATH: path,
          EDGE_AGENT_IPC_FORMAT: this.ctx.format,
        },
        stdio: ["ignore", this.ctx.onOutput ? "pipe" : "ignore", this.ctx.onOutput ? "pipe" : "ignore"],
        // Own process group: stop() signals the whole group, so wrappers (sh, tsx) do not leave orphans.
        detached: true,
      });
    } catch (e) {
      this.exited(null, null, `failed to start: ${(e as Error).message}`);
      return;
    }
    this.child = child;
    this.startedAt = Date.now();
    let done = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null, reason?: string) => {
      if (done) return;
      done = true;
      if (this.child === child) this.child = undefined;
      // What the connector left running in its group (a wrapper's children) ends with it: a restarted
      // connector must not share the FIFO with its predecessor's leftovers.
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // the group is empty: the usual case
        }
      }
      this.exited(code, signal, reason ?? exitReason(code, signal));
    };
    child.once("spawn", () => {
      this.st.running = true;
      this.st.pid = child.pid;
      // After "spawn" the child runs the program, so its recorded command line is the program's.
      if (this.ctx.pidFile !== undefined && child.pid !== undefined) {
        try {
          writePidFile(this.ctx.pidFile, child.pid);
        } catch {
          // not fatal: only the leftover check after an agent crash depends on it
        }
      }
    });
    child.once("error", (e) => finish(null, null, `failed to start: ${e.message}`));
    child.once("exit", (code, signal) => finish(code, signal));
    for (const name of ["stdout", "stderr"] as const) {
      const stream = child[name];
      if (stream === null || this.ctx.onOutput === undefined) continue;
      let rest = "";
      stream.setEncoding("utf8");
      stream.on("data", (s: string) => {
        const lines = (rest + s).split("\n");
        rest = lines.pop()!.slice(-4096);
        for (const l of lines) this.ctx.onOutput!(l, name);
      });
    }
  }

  private exited(code: number | null, signal: NodeJS.Signals | null, reason: string): void {
    if (this.ctx.pidFile !== undefined) rmSync(this.ctx.pidFile, { force: true });
    this.st.running = false;
    this.st.pid = undefined;
    const policy = this.launch.restart;
    if (this.startedAt > 0 && Date.now() - this.startedAt >= policy.reset_after_ms) this.consecutive = 0;
    const failed = code !== 0 || signal !== null;
    const wanted =
      !this.stopping &&
      (policy.policy === "always" || (policy.policy === "on-failure" && failed)) &&
      (policy.max_restarts === 0 || this.consecutive < policy.max_restarts);
    let restartInMs: number | undefined;
    if (wanted) {
      this.consecutive++;
      restartInMs = backoffDelay(policy, this.consecutive);
      this.timer = setTimeout(() => {
        this.st.restarts++;
        this.spawnOnce();
      }, restartInMs);
    } else if (!this.stopping) this.st.finished = true;
    const info: ExitInfo = { code, signal, reason, restartInMs };
    this.st.lastExit = info;
    this.ctx.onExit?.(info);
  }
}
