// `npx edge-agent bench` sizes a device: with no --server it starts a cloud peer of its own, sends points from
// the sample connector through a FIFO, an agent and iSCP into the cloud's storage, and prints the table; with
// --server it does the same against a cloud that is already running, as the edge whose credentials it is given.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { apiClient, ensureDemoCloud } from "../../bin/demo-setup.js";
import { latencyRate } from "../../runtime/bench/cli.js";
import { adminToken } from "../cloud/accounts/helpers.js";
import { startTestPeer, type TestPeer } from "../cloud/harness.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
let child: ChildProcess | undefined;
let peer: TestPeer | undefined;
let tmp: string | undefined;

afterEach(async () => {
  if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, "SIGKILL");
  await peer?.stop();
  peer = undefined;
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
});

// The bench runs with a temp root of its own (TMPDIR), so other benchmarks on the machine do not count here.
const benchTmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-test-"));
afterAll(() => fs.rmSync(benchTmp, { recursive: true, force: true }));
const benchDirs = () => new Set(fs.readdirSync(benchTmp).filter((n) => n.startsWith("edge-bench-")));

/** Runs `edge-agent bench` with `args`: its exit code, stdout and stderr. */
async function bench(args: string[], command = ["npx", "edge-agent"]): Promise<{ code: number | null; out: string; err: string }> {
  child = spawn(command[0]!, [...command.slice(1), "bench", ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, TMPDIR: benchTmp } });
  let out = "";
  let err = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  const code = await new Promise<number | null>((resolve) => child!.once("exit", (c) => resolve(c)));
  return { code, out, err };
}

/** The table row whose path starts with `label`, by column name. */
function tableRow(out: string, label: string): (name: string) => number {
  const lines = out.split("\n").filter((l) => l.trim() !== "");
  const header = lines.find((l) => l.startsWith("path"))!.trim().split(/\s+/);
  const row = lines.find((l) => l.startsWith(label))!.trim().split(/\s+/);
  return (name) => Number(row[header.indexOf(name)]);
}

it("runs against a local cloud peer and prints points/s, latency, CPU and memory", async () => {
  const before = benchDirs();
  const { code, out, err } = await bench(["--duration", "2", "--payload", "16", "--rate", "1000", "--flush", "immediately"]);
  expect(code, `stdout:\n${out}\nstderr:\n${err}`).toBe(0);

  // Progress while it ran, then the table: a header and one row for the run.
  expect(err).toMatch(/points stored/);
  const col = tableRow(out, "ours/websocket,flush=immediately");
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
  const { code, err } = await bench(["--payload", "0", "--flush", "sometimes"], [process.execPath, path.join(ROOT, "bin/edge-agent.mjs")]);
  expect(code).toBe(2);
  expect(err).toMatch(/--payload must be 1\.\.16777216; --flush must be interval or immediately/);
}, 60_000);

it("measures latency after the as-fast-as-possible run at 10,000 points/s, or half the rate reached", () => {
  expect(latencyRate(1_100_000)).toBe(10_000);
  expect(latencyRate(20_000)).toBe(10_000);
  expect(latencyRate(1_017)).toBe(508); // 64 KiB payloads
  expect(latencyRate(0)).toBe(1);
});

it("runs against a cloud that is already running, as the edge it is given, and the cloud keeps the measurement", async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-server-"));
  peer = await startTestPeer({ dataDir: tmp });
  const token = await adminToken(peer);
  const edge = await ensureDemoCloud(tmp, apiClient(peer.url, token));
  const before = benchDirs();
  const { code, out, err } = await bench([
    "--server", peer.url, "--project-uuid", edge.projectUuid, "--edge-uuid", edge.edgeUuid, "--client-secret", edge.edgeSecret,
    "--duration", "2", "--payload", "16", "--rate", "500",
  ]);
  expect(code, `stdout:\n${out}\nstderr:\n${err}`).toBe(0);
  expect(err).toContain(`against ${peer.url}`);
  const col = tableRow(out, "ours/websocket");
  expect(col("points")).toBe(1000);
  expect(col("p99_ms")).toBeGreaterThanOrEqual(col("p50_ms"));
  // The run's measurement stays in the project, with every point.
  const r = await fetch(`${peer.url}/api/v1/projects/${edge.projectUuid}/measurements`, { headers: { "X-Intdash-Token": token } });
  const items = ((await r.json()) as { items: { received_data_points: number }[] }).items;
  expect(items.map((m) => m.received_data_points)).toEqual([1000]);
  expect([...benchDirs()].filter((d) => !before.has(d))).toEqual([]);
}, 120_000);

it("asks for the edge's credentials when --server has none and the agent's data has no connection", async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-server-"));
  const { code, err } = await bench(["--server", "http://127.0.0.1:9", "--data", tmp], [process.execPath, path.join(ROOT, "bin/edge-agent.mjs")]);
  expect(code).toBe(2);
  expect(err).toContain("--server needs the edge's credentials: --project-uuid, --edge-uuid, --client-secret");
}, 60_000);
