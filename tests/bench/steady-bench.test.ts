// `npm run bench -- steady` at a tiny size (a given rate, 3 s): the row carries the RSS slope of the agent and
// the cloud (and of their anonymous and file-backed parts) and the latency; the slope is a least-squares fit
// over the window's samples.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { slopePerMinute, slopeWindow } from "../../bench/steady.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-steady-test-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

it("runs the agent path at the given rate and reports both sides' RSS slope and p50/p99", async () => {
  const env = { ...process.env, BENCH_RESULTS_DIR: path.join(tmp, "results"), TMPDIR: tmp };
  const child = spawn("npx", ["tsx", "bench/run.ts", "steady", "--duration", "3", "--rate", "2000"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (b: Buffer) => (err += b.toString()));
  child.stdout.resume();
  const code = await new Promise((resolve) => child.on("exit", resolve));
  expect(code, err.slice(-2000)).toBe(0);
  const json = JSON.parse(fs.readFileSync(path.join(tmp, "results", "steady.json"), "utf8")) as {
    rows: Array<Record<string, unknown>>;
    rss_series_MiB: Record<string, unknown[]>;
  };
  const [row] = json.rows;
  expect(row, JSON.stringify(row)).toMatchObject({
    path: "ours/websocket",
    payload_B: 16,
    rate: 2000,
    duration_s: 3,
    max_points_per_s: null,
    stored: 6000,
  });
  expect(row!.note, String(row!.note)).toBeUndefined();
  expect(row!.p99_ms as number).toBeGreaterThanOrEqual(row!.p50_ms as number);
  for (const side of ["agent", "cloud"]) {
    expect(row![`rss_${side}_slope_MiB_per_min`]).toEqual(expect.any(Number));
    expect(row![`rss_${side}_samples`] as number).toBeGreaterThanOrEqual(2);
    expect(row![`rss_${side}_first_MiB`] as number).toBeGreaterThan(10);
    expect(json.rss_series_MiB[side]!.length).toBeGreaterThanOrEqual(3);
    // Its anonymous and file-backed parts (the agent's LMDB map is file-backed).
    for (const part of ["anon", "file"]) {
      expect(row![`rss_${side}_${part}_slope_MiB_per_min`]).toEqual(expect.any(Number));
      expect(json.rss_series_MiB[`${side}_${part}`]!.length).toBeGreaterThanOrEqual(3);
    }
  }
}, 300_000);

it("fits the slope in MiB/min by least squares over the last 50 s, leaving out the first second", () => {
  // 0.5 MiB/s growth with noise around it: 30 MiB/min.
  const series = Array.from({ length: 61 }, (_, t) => [t, 100 + 0.5 * t + (t % 2 ? 0.2 : -0.2)] as const);
  const w = slopeWindow(series, 60);
  expect(w[0]![0]).toBe(10);
  expect(w[w.length - 1]![0]).toBe(60);
  expect(slopePerMinute(w)).toBeCloseTo(30, 0);
  expect(
    slopePerMinute([
      [1, 5],
      [2, 5],
      [3, 5],
    ]),
  ).toBe(0);
  expect(slopeWindow(series, 3).map(([t]) => t)).toEqual([1, 2, 3]);
  expect(slopePerMinute([[1, 5]])).toBeNaN();
});
