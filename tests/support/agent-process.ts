// The edge-agent command as a child process with its output kept, for tests of what a service manager sees
// (signals, exit codes, log lines). Register with `agentProcesses()` in a test file: what it started is
// killed, and its temp dirs removed, after each test.
import { spawn, type ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterEach } from "vitest";
import { tempDir } from "./agent.js";

const BIN = path.resolve(import.meta.dirname, "../../bin/edge-agent.mjs");

export interface AgentProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** stdout's JSON log lines. */
  logs(): Array<Record<string, unknown> & { level: number; msg: string }>;
  exited: Promise<number | null>;
}

export function agentProcesses() {
  const started: ChildProcess[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });
  return {
    async dir(prefix: string): Promise<string> {
      const d = await tempDir(prefix);
      dirs.push(d);
      return d;
    },
    spawn(args: string[], env: Record<string, string> = {}): AgentProcess {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { ...process.env, AGENT_LOG_LEVEL: "info", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      started.push(child);
      let out = "";
      let err = "";
      child.stdout!.on("data", (d) => (out += d));
      child.stderr!.on("data", (d) => (err += d));
      const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
      return {
        child,
        stdout: () => out,
        stderr: () => err,
        logs: () =>
          out
            .split("\n")
            .filter((l) => l.startsWith("{"))
            .map((l) => JSON.parse(l)),
        exited,
      };
    },
  };
}
