// Child processes of a benchmark case: our entry scripts (compiled, or through tsx in a source checkout)
// from the package root, the sample connector with its end-of-run report, and stopping a child by its pid
// (SIGTERM, then SIGKILL).
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import fs from "node:fs";
import { nodeEntryArgs, PACKAGE_ROOT } from "../../lib/package-paths.js";

/** The package root, also when installed under node_modules. */
export const ROOT = PACKAGE_ROOT;

/** Extra node options for every child (BENCH_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile). */
export const nodeArgs = () => (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);

/** Runs our entry script `script` (its .ts path from the package root) ...args with the package root as working directory. */
export function spawnEntry(
  script: string,
  args: string[],
  stdio: StdioOptions = ["ignore", "ignore", "inherit"],
  env?: NodeJS.ProcessEnv,
): ChildProcess {
  return spawn(process.execPath, [...nodeArgs(), ...nodeEntryArgs(script), ...args], {
    cwd: ROOT,
    stdio,
    env: env ?? process.env,
  });
}

/** Resolves when the child has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Stops a child by its pid: `signal`, then SIGKILL after `graceMs`. */
export async function stopChild(
  child: ChildProcess | undefined,
  signal: NodeJS.Signals = "SIGTERM",
  graceMs = 5000,
): Promise<void> {
  if (!child || child.pid === undefined) return;
  const gone = exited(child);
  if (child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(child.pid, signal);
    } catch {
      return; // already gone
    }
  }
  const timer = setTimeout(() => {
    try {
      process.kill(child.pid!, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }, graceMs);
  await gone;
  clearTimeout(timer);
}

export interface ConnectorReport {
  sent: number;
  /** CLOCK_MONOTONIC ns of the first and the last write. */
  first_ns: number;
  last_ns: number;
}

export interface ConnectorOptions {
  fifo: string;
  /** Points/s, 0 = as fast as the pipe takes them. */
  rate: number;
  size: number;
  /** Stop after this many points (0 = until stopped). */
  count: number;
  name?: string;
  /** File for the connector's write log (first seq, points, stamp ns per write), written when it stops. */
  writeLog?: string;
}

export interface Connector {
  child: ChildProcess;
  /** The connector's report once it stopped (after stop(), or by itself at count). */
  report: Promise<ConnectorReport>;
  /**
   * SIGTERM; the connector reports when its current write is done, which waits for the reader while the
   * pipe is full (a backed-up receiver): SIGKILL only after `graceMs`.
   */
  stop(graceMs?: number): Promise<ConnectorReport>;
}

/** The sample connector writing stamped payloads into `fifo` (it waits for a reader to open the FIFO). */
export function startConnector(o: ConnectorOptions): Connector {
  const args = [
    "--path",
    o.fifo,
    "--rate",
    String(o.rate),
    "--size",
    String(o.size),
    "--count",
    String(o.count),
    "--stamp",
    "--report",
  ];
  if (o.name) args.push("--name", o.name);
  if (o.writeLog) args.push("--write-log", o.writeLog);
  const child = spawnEntry("runtime/connectors/sample-connector.ts", args, ["ignore", "pipe", "inherit"]);
  let out = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString("utf8")));
  const report = new Promise<ConnectorReport>((resolve, reject) => {
    child.once("exit", (code, signal) => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve(JSON.parse(line) as ConnectorReport);
      else reject(new Error(`sample connector exited (${signal ?? code}) without a report`));
    });
  });
  report.catch(() => undefined); // observed by stop() or the caller
  return {
    child,
    report,
    async stop(graceMs = 60_000) {
      await stopChild(child, "SIGTERM", graceMs);
      return report;
    },
  };
}

/** Waits until `p` exists as a FIFO (the agent or a producer created it). */
export async function waitForFifo(p: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (fs.statSync(p).isFIFO()) return;
    } catch {
      // not there yet
    }
    if (Date.now() > end) throw new Error(`FIFO ${p} was not created within ${ms} ms`);
    await sleep(50);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface IpcChild<TReady, TStats> {
  child: ChildProcess;
  ready: TReady;
  /** Asks the child for its figures ({type: "stats", ...ask} -> {type: "stats", ...}). */
  stats(ask?: Record<string, unknown>): Promise<TStats>;
  /** {type: "stop"}, then SIGKILL when it has not exited within 10 s. */
  stop(): Promise<void>;
}

/**
 * A child of ours that speaks the benchmark's small IPC protocol: it sends {type: "ready", ...} once
 * set up, answers {type: "stats"} with {type: "stats", ...}, and exits on {type: "stop"}.
 */
export async function startIpcChild<TReady, TStats>(
  script: string,
  args: string[],
  what: string,
  startMs = 60_000,
): Promise<IpcChild<TReady, TStats>> {
  const child = spawnEntry(script, args, ["ignore", "inherit", "inherit", "ipc"]);
  const waiters: Array<(s: TStats) => void> = [];
  let ready: TReady;
  try {
    ready = await new Promise<TReady>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what} did not start within ${startMs / 1000} s`)), startMs);
      child.once("exit", (code) => reject(new Error(`${what} exited (${code}) before it was ready`)));
      child.on("message", (m: { type: string }) => {
        if (m.type === "ready") {
          clearTimeout(timer);
          resolve(m as TReady);
        } else if (m.type === "stats") waiters.shift()?.(m as TStats);
      });
    });
  } catch (e) {
    await stopChild(child, "SIGKILL");
    throw e;
  }
  return {
    child,
    ready,
    stats: (ask) =>
      new Promise<TStats>((resolve, reject) => {
        if (!child.connected) return reject(new Error(`${what} has exited`));
        waiters.push(resolve);
        child.send({ type: "stats", ...ask });
      }),
    async stop() {
      if (child.connected) child.send({ type: "stop" });
      const t = setTimeout(() => void stopChild(child, "SIGKILL"), 10_000);
      await exited(child);
      clearTimeout(t);
    },
  };
}
