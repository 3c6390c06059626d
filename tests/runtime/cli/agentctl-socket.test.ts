// agentctl finds the agent's socket by itself: --socket, else AGENT_SOCKET, else ./data/agent/agent.sock when an
// agent started in this folder made it, else the service's /run/edge-agent/agent.sock; when nothing answers,
// the error names the path and how it was chosen.
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startAgent, type RunningAgent } from "../../../runtime/daemon.js";
import { tempDir } from "../../support/agent.js";

const AGENTCTL = path.resolve("bin/agentctl.mjs");
let dir: string;
let agent: RunningAgent;
beforeAll(async () => {
  dir = await tempDir("agentctl-socket-");
  agent = await startAgent({
    socketPath: path.join(dir, "data/agent/agent.sock"),
    dataDir: path.join(dir, "data/agent"),
  });
});
afterAll(async () => {
  await agent?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** agentctl in `cwd` with no AGENT_SOCKET unless given. */
function agentctl(cwd: string, args: string[], env: Record<string, string> = {}) {
  const { AGENT_SOCKET: _unset, ...rest } = process.env;
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [AGENTCTL, ...args],
      { cwd, env: { ...rest, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

it("talks to ./data/agent/agent.sock when an agent made it in this folder", async () => {
  const r = await agentctl(dir, ["version"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
}, 120_000);

it("tries the service's socket elsewhere and names what it tried when nothing answers", async () => {
  const empty = await tempDir("agentctl-nowhere-");
  try {
    const r = await agentctl(empty, ["version"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^agentctl: cannot reach the edge agent at \/run\/edge-agent\/agent\.sock \(\.\/data\/agent\/agent\.sock does not exist; give --socket or AGENT_SOCKET for another\): /,
    );
    const env = await agentctl(empty, ["version"], { AGENT_SOCKET: path.join(empty, "x.sock") });
    expect(env.stderr).toContain(`cannot reach the edge agent at ${path.join(empty, "x.sock")} (AGENT_SOCKET): `);
    const flag = await agentctl(dir, ["--socket", path.join(empty, "y.sock"), "version"]);
    expect(flag.stderr).toContain(`cannot reach the edge agent at ${path.join(empty, "y.sock")} (--socket): `);
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
}, 120_000);

it("says the lookup in --help", async () => {
  const r = await agentctl(dir, ["--help"]);
  expect(r.stdout.replace(/\s+/g, " ")).toContain(
    "command API socket (env AGENT_SOCKET; default: ./data/agent/agent.sock when it exists, else the service's /run/edge-agent/agent.sock)",
  );
}, 120_000);
