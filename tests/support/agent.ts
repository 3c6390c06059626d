// Test harness: an agent on a real Unix socket in a temp dir, a client for it, and agentctl as a child.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ApiClient } from "../../runtime/cli/client.js";
import { startAgent, type RunningAgent } from "../../runtime/daemon.js";
import type { Openers } from "../../runtime/supervisor.js";

export interface TestAgent {
  dir: string;
  dataDir: string;
  socketPath: string;
  agent: RunningAgent;
  api: ApiClient;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/**
 * What the tests' agents allow device connectors beyond the default policy: programs from the system's
 * folders and node's, FIFOs anywhere under the temp directory. The default itself is tested in
 * tests/runtime/api/launch-policy.test.ts.
 */
export const TEST_ALLOW_DIRS = [os.tmpdir(), "/bin", "/usr/bin", "/usr/local/bin", path.dirname(process.execPath)];

export async function tempDir(prefix = "agent-"): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

export async function startTestAgent(openers?: Openers, allowDirs: readonly string[] = []): Promise<TestAgent> {
  const dir = await tempDir();
  const dataDir = path.join(dir, "data");
  const socketPath = path.join(dir, "agent.sock");
  const t: TestAgent = {
    dir,
    dataDir,
    socketPath,
    agent: await startAgent({ socketPath, dataDir, openers, allowDirs: [...TEST_ALLOW_DIRS, ...allowDirs] }),
    api: new ApiClient(socketPath),
    async restart() {
      await t.agent.close();
      t.agent = await startAgent({ socketPath, dataDir, openers, allowDirs: [...TEST_ALLOW_DIRS, ...allowDirs] });
    },
    async close() {
      await t.agent.close();
      // Retried as Node's rm offers: once, in a full run, an entry appeared while the folder was being removed
      // (ENOTEMPTY); which one is not known.
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
  return t;
}

/** `n` test agents started side by side. */
export function startTestAgents(n: number): Promise<TestAgent[]> {
  return Promise.all(Array.from({ length: n }, () => startTestAgent()));
}

/** Polls until `check` returns a truthy value (or throws after `ms`). */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 30_000,
): Promise<T> {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until)
      throw new Error(`condition not met within ${ms} ms${last ? `: ${(last as Error).message}` : ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const AGENTCTL = path.resolve("bin/agentctl.mjs");

/** Runs the real agentctl against `socket` (through AGENT_SOCKET) and resolves with what it printed. */
export function agentctl(
  socket: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [AGENTCTL, ...args],
      { env: { ...process.env, AGENT_SOCKET: socket, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
