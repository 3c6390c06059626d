// `npm run bench -- startup` (or: npx tsx bench/startup.ts): how fast the commands start as installed
// (compiled code, no TypeScript loader): wall time of `agentctl version` against a running agent, and of
// the edge agent from spawn until its command socket answers (GET /version, answered while the agent still
// loads) and until it serves its settings (GET /connection, once the whole agent is open). Printed, not
// asserted; the targets on a device are agentctl under 0.4 s and the socket under 1 s.
import { execFile, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { ApiClient } from "../runtime/cli/client.js";
import { stopChild } from "../runtime/device-bench/children.js";
import { isMain, report, type Row } from "./lib.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const RUNS = 5;
const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;

async function agentUntilSocket(socket: string, data: string) {
  const t0 = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [path.join(ROOT, "bin/edge-agent.mjs"), "--socket", socket, "--data", data, "--log-level", "warn"],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const api = new ApiClient(socket);
  const until = async (p: string) => {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`edge-agent exited with ${child.exitCode}`);
      if ((await api.get(p).catch(() => undefined))?.status === 200) return seconds(t0);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const s = await until("/version");
  return { child, s, loadedS: await until("/connection") };
}

function summary(what: string, times: number[], target: number): Row {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    what,
    runs: times.length,
    minS: +sorted[0]!.toFixed(3),
    medianS: +sorted[Math.floor(sorted.length / 2)]!.toFixed(3),
    targetS: target,
  };
}

export async function run(): Promise<Row[]> {
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build.mjs"), "--quiet"], { stdio: "inherit" });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-startup-"));
  const socketTimes: number[] = [];
  const loadedTimes: number[] = [];
  const ctlTimes: number[] = [];
  const nodeTimes: number[] = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      // The floor on this machine: node itself with nothing to load.
      const t0 = process.hrtime.bigint();
      await promisify(execFile)(process.execPath, ["-e", ""]);
      nodeTimes.push(seconds(t0));
      const socket = path.join(dir, "agent.sock");
      const { child, s, loadedS } = await agentUntilSocket(socket, path.join(dir, "data"));
      socketTimes.push(s);
      loadedTimes.push(loadedS);
      try {
        const t0 = process.hrtime.bigint();
        await promisify(execFile)(process.execPath, [
          path.join(ROOT, "bin/agentctl.mjs"),
          "--socket",
          socket,
          "version",
        ]);
        ctlTimes.push(seconds(t0));
      } finally {
        await stopChild(child);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return [
    summary("node -e '' (floor)", nodeTimes, 0),
    summary("agentctl version", ctlTimes, 0.4),
    summary("edge-agent socket answers", socketTimes, 1),
    summary("edge-agent serves settings", loadedTimes, 0),
  ];
}

if (isMain(import.meta.url)) report("startup", await run());
