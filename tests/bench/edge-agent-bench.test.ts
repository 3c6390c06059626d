// `npx edge-agent bench` sizes a device: with no --server it starts a cloud peer of its own, sends points from
// the sample connector through a FIFO, an agent and iSCP into the cloud's storage, and prints the table; with
// --server it does the same against a cloud that is already running, as the edge whose credentials it is given.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { apiClient, ensureDemoCloud } from "../../bin/demo-setup.js";
import type { CaseResult } from "../../runtime/device-bench/agent-case.js";
import { latencyRate } from "../../runtime/device-bench/cli.js";
import { formatRate, loadWarning, verdictLines } from "../../runtime/device-bench/verdict.js";
import { adminToken } from "../cloud/accounts/helpers.js";
import { startTestPeer, type TestPeer } from "../cloud/harness.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
let child: ChildProcess | undefined;
let peer: TestPeer | undefined;
let tmp: string | undefined;

afterEach(async () => {
  if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null)
    process.kill(child.pid, "SIGKILL");
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
async function bench(
  args: string[],
  command = ["npx", "edge-agent"],
): Promise<{ code: number | null; out: string; err: string }> {
  child = spawn(command[0]!, [...command.slice(1), "bench", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, TMPDIR: benchTmp },
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  const code = await new Promise<number | null>((resolve) => child!.once("exit", (c) => resolve(c)));
  return { code, out, err };
}

/** The table row whose first cell (path with --wide, else rate) starts with `label`, by column name. */
function tableRow(out: string, label: string): (name: string) => number {
  const lines = out.split("\n").filter((l) => l.trim() !== "");
  const header = lines
    .find((l) => /^(path|rate) /.test(l))!
    .trim()
    .split(/\s+/);
  const row = lines
    .find((l) => l.startsWith(label))!
    .trim()
    .split(/\s+/);
  return (name) => Number(row[header.indexOf(name)]);
}

/** A verdict line as a pattern that allows the 100-column wrap at any space (`<n>` a number, `<rate>` e.g. "10 k"). */
function wrapped(line: string): RegExp {
  const esc = line
    .replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")
    .replace(/<n>/g, "[\\d.]+")
    .replace(/<rate>/g, "[\\d.]+(?:\\s[Mk])?");
  return new RegExp("^" + esc.replace(/ /g, "\\s+"), "m");
}

it("runs against a local cloud peer and prints points/s, latency, CPU and memory (--wide: every column)", async () => {
  const before = benchDirs();
  const { code, out, err } = await bench([
    "--duration",
    "2",
    "--payload",
    "16",
    "--rate",
    "1000",
    "--flush",
    "immediately",
    "--wide",
  ]);
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
  for (const p of ["connector", "agent", "cloud"]) expect(col(`cpu_${p}_%`)).toBeGreaterThanOrEqual(0);
  // A fixed-rate run says whether the device kept up (either answer: on a busy machine it may not), and what its
  // latency figures measure.
  expect(out).toMatch(
    /^this device (kept up|did NOT keep up) with 1 k points\/s of 16-byte payloads to a local cloud peer \(websocket\)/m,
  );
  expect(out).toMatch(
    wrapped(
      "latency at 1 k points/s: p50 <n> ms, p99 <n> ms, measured from FIFO write to the cloud's commit of the point (SQLite), with flush_policy immediately",
    ),
  );
  // Its temp dir (cloud data, agent data, FIFO) is gone.
  expect([...benchDirs()].filter((d) => !before.has(d))).toEqual([]);
}, 120_000);

it("says what the device sustains and whether it meets --target-rate, under a table that fits 100 columns", async () => {
  // Two seconds: the latency case leaves its first second out as warm-up.
  const { code, out, err } = await bench(
    ["--duration", "2", "--target-rate", "1000"],
    [process.execPath, path.join(ROOT, "bin/edge-agent.mjs")],
  );
  expect(code, `stdout:\n${out}\nstderr:\n${err}`).toBe(0);
  for (const line of out.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100);
  // The narrow table: no path column (the verdict names the transport), the as-fast-as-possible row first.
  const header = out.split("\n").find((l) => l.startsWith("rate"))!;
  expect(header.split(/\s+/)).toEqual(
    expect.arrayContaining(["payload_B", "points_per_s", "MB_per_s", "p50_ms", "p99_ms", "cpu_agent_%"]),
  );
  expect(header).not.toMatch(/path|rss_connector/);
  const col = tableRow(out, "max");
  const verdict =
    /^this device sustains about (\S+ ?[Mk]?) points\/s of 16-byte payloads to a local cloud peer \(websocket\)$/m.exec(
      out,
    );
  expect(verdict, out).not.toBeNull();
  expect(verdict![1]!.trim()).toBe(formatRate(col("points_per_s")).trim());
  // Met or not depends on the machine's load; the line says which, with its margin or its share.
  expect(out).toMatch(
    /^target 1 k points\/s: (met, with a margin of \d+ % \([\d.]+× the target\)|NOT met: the device reaches \d+ % of it)$/m,
  );
  expect(out).toMatch(
    wrapped(
      "latency at <rate> points/s: p50 <n> ms, p99 <n> ms, measured from FIFO write to the cloud's commit of the point (SQLite), with flush_policy interval (chunks sent every 5 ms)",
    ),
  );
  expect(out).toMatch(/^note: the cloud peer ran on this device and shared its CPU/m);
}, 180_000);

it("words the verdict for a target not met, a fixed rate not kept up, a remote cloud, and a busy machine", () => {
  const result = (o: Partial<CaseResult>): CaseResult => ({
    path: "ours/websocket",
    payloadB: 16,
    rate: 0,
    sent: 1000,
    stored: 1000,
    seconds: 1,
    pointsPerS: 1000,
    MBPerS: 0.02,
    procs: {},
    note: "",
    ...o,
  });
  const ctx = { transport: "websocket" as const, flush: "interval" as const };
  expect(verdictLines([result({ pointsPerS: 2_840_000 })], { ...ctx, targetRate: 4_000_000 })).toEqual([
    "this device sustains about 2.8 M points/s of 16-byte payloads to a local cloud peer (websocket)",
    "target 4 M points/s: NOT met: the device reaches 71 % of it",
    expect.stringMatching(/^note: the cloud peer ran on this device/),
  ]);
  expect(
    verdictLines([result({ rate: 5000, sent: 5000, stored: 3000, pointsPerS: 3000 })], {
      ...ctx,
      server: "https://cloud.example",
      targetRate: 5000,
    }),
  ).toEqual([
    "this device did NOT keep up with 5 k points/s of 16-byte payloads to the cloud at https://cloud.example (websocket): 3 k points/s, 3000 of 5000 points stored",
    "target 5 k points/s: NOT met",
  ]);
  expect(loadWarning(1.5, 2)).toMatch(/^warning: load average 1\.50 on 2 cores at the start: .*figures may be low/);
  expect(loadWarning(0.9, 2)).toBeUndefined();
});

it("refuses bad options with usage and exit code 2", async () => {
  const { code, err } = await bench(
    ["--payload", "0", "--flush", "sometimes", "--target-rate", "0"],
    [process.execPath, path.join(ROOT, "bin/edge-agent.mjs")],
  );
  expect(code).toBe(2);
  expect(err).toMatch(
    /--payload must be 1\.\.16777216; --flush must be interval or immediately; --target-rate must be a positive number/,
  );
}, 120_000);

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
    "--server",
    peer.url,
    "--project-uuid",
    edge.projectUuid,
    "--edge-uuid",
    edge.edgeUuid,
    "--client-secret",
    edge.edgeSecret,
    "--duration",
    "2",
    "--payload",
    "16",
    "--rate",
    "500",
    "--wide",
  ]);
  expect(code, `stdout:\n${out}\nstderr:\n${err}`).toBe(0);
  expect(err).toContain(`against ${peer.url}`);
  const col = tableRow(out, "ours/websocket");
  expect(col("points")).toBe(1000);
  expect(col("p99_ms")).toBeGreaterThanOrEqual(col("p50_ms"));
  // The run's measurement stays in the project, with every point.
  const r = await fetch(`${peer.url}/api/v1/projects/${edge.projectUuid}/measurements`, {
    headers: { "X-Intdash-Token": token },
  });
  const items = ((await r.json()) as { items: { received_data_points: number }[] }).items;
  expect(items.map((m) => m.received_data_points)).toEqual([1000]);
  expect([...benchDirs()].filter((d) => !before.has(d))).toEqual([]);
}, 120_000);

it("asks for the edge's credentials when --server has none and the agent's data has no connection", async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-server-"));
  const { code, err } = await bench(
    ["--server", "http://127.0.0.1:9", "--data", tmp],
    [process.execPath, path.join(ROOT, "bin/edge-agent.mjs")],
  );
  expect(code).toBe(2);
  expect(err).toContain("--server needs the edge's credentials: --project-uuid, --edge-uuid, --client-secret");
}, 120_000);

it("takes a client secret that starts with a dash, as an edge issued one before secrets stopped doing so", async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-server-"));
  const { code, err } = await bench(
    ["--server", "http://127.0.0.1:9", "--data", tmp, "--client-secret", "-Xq3_secret"],
    [process.execPath, path.join(ROOT, "bin/edge-agent.mjs")],
  );
  expect(code).toBe(2);
  expect(err).not.toContain("ambiguous");
  expect(err).toContain("--server needs the edge's credentials: --project-uuid, --edge-uuid (or");
}, 120_000);
