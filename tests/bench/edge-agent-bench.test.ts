// `npx edge-agent bench` sizes a device: with no --server it starts a cloud peer of its own, sends points from
// the sample connector through a FIFO, an agent and iSCP into the cloud's storage, and prints the table.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { latencyRate } from "../../runtime/bench/cli.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
let child: ChildProcess | undefined;

afterEach(() => {
  if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, "SIGKILL");
});

const benchDirs = () => new Set(fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith("edge-bench-")));

it("runs against a local cloud peer and prints points/s, latency, CPU and memory", async () => {
  const before = benchDirs();
  child = spawn("npx", ["edge-agent", "bench", "--duration", "2", "--payload", "16", "--rate", "1000", "--flush", "immediately"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  const code = await new Promise<number | null>((resolve) => child!.once("exit", (c) => resolve(c)));
  expect(code, `stdout:\n${out}\nstderr:\n${err}`).toBe(0);

  // Progress while it ran, then the table: a header and one row for the run.
  expect(err).toMatch(/points stored/);
  const lines = out.split("\n").filter((l) => l.trim() !== "");
  const header = lines.find((l) => l.startsWith("path"))!.trim().split(/\s+/);
  const row = lines.find((l) => l.startsWith("ours/websocket,flush=immediately"))!.trim().split(/\s+/);
  const col = (name: string) => Number(row[header.indexOf(name)]);
  expect(col("points")).toBe(2000);
  expect(col("points_per_s")).toBeGreaterThan(0);
  expect(col("MB_per_s")).toBeGreaterThan(0);
  expect(col("p50_ms")).toBeGreaterThan(0);
  expect(col("p99_ms")).toBeGreaterThanOrEqual(col("p50_ms"));
  for (const p of ["connector", "agent", "cloud"]) expect(col(`rss_${p}_MiB`)).toBeGreaterThan(0);
  // Its temp dir (cloud data, agent data, FIFO) is gone.
  expect([...benchDirs()].filter((d) => !before.has(d))).toEqual([]);
}, 120_000);

it("refuses bad options with usage and exit code 2", async () => {
  child = spawn(process.execPath, [path.join(ROOT, "bin/edge-agent.mjs"), "bench", "--payload", "0", "--flush", "sometimes"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  const code = await new Promise<number | null>((resolve) => child!.once("exit", (c) => resolve(c)));
  expect(code).toBe(2);
  expect(err).toMatch(/--payload must be 1\.\.16777216; --flush must be interval or immediately/);
}, 60_000);

it("measures latency after the as-fast-as-possible run at 10,000 points/s, or half the rate reached", () => {
  expect(latencyRate(1_100_000)).toBe(10_000);
  expect(latencyRate(20_000)).toBe(10_000);
  expect(latencyRate(1_017)).toBe(508); // 64 KiB payloads
  expect(latencyRate(0)).toBe(1);
});
