// `npm run bench -- agent` at a tiny size: ours and a batched peer, two repetitions each in alternating order,
// every row with the fields the results file promises, and a ratio only between rows counted at the same point.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { benchTemp, runBench as runBenchIn } from "./run-bench.js";

const tmp = benchTemp("bench-agent-test-");
// Its own temp root too: the peers' data directories go away with it.
const runBench = (args: string[]) => runBenchIn(tmp, "agent", args, { TMPDIR: tmp, CLOUD_DURABILITY: "power-loss" });

it("runs ours and a batched peer for the same duration, reports the fields per row, and compares equal counts_at only", async () => {
  const r = await runBench([
    "--duration",
    "1",
    "--reps",
    "2",
    "--payloads",
    "1024",
    "--paths",
    "ours/websocket,mosquitto/batched",
    "--no-latency",
  ]);
  expect(r.code, r.err.slice(-2000)).toBe(0);
  expect(r.err).toMatch(
    /agent bench: load average [\d.]+ [\d.]+ [\d.]+ at start; 2 repetition\(s\) of 1 s per throughput case; CLOUD_DURABILITY=power-loss/,
  );
  // Alternating order: ours first in the first repetition, the peer first in the second.
  const order = [...r.err.matchAll(/^agent bench: (\S+), 1024 B/gm)].map((m) => m[1]);
  expect(order).toEqual(["ours/websocket", "mosquitto/batched", "mosquitto/batched", "ours/websocket"]);

  const json = JSON.parse(fs.readFileSync(path.join(tmp, "results", "agent.json"), "utf8")) as {
    rows: Array<Record<string, unknown>>;
    ratios: unknown[];
    load_at_start: number[];
  };
  expect(json.load_at_start).toHaveLength(3);
  expect(json.rows.map((x) => x.path)).toEqual(["ours/websocket", "mosquitto/batched"]);
  for (const row of json.rows) {
    expect(row, JSON.stringify(row)).toMatchObject({
      payload_B: 1024,
      points_per_message: 1013,
      counts_at: "sqlite-commit+fsync",
      reps: 2,
      seconds: expect.any(Number),
      points_per_s: expect.any(Number),
      MB_per_s: expect.any(Number),
      load1: expect.any(Number),
    });
    expect(row.note ?? "").not.toMatch(/failed|incomplete|volume guard/);
    // Time-bound: the connector wrote for about the duration, then the rest was stored.
    expect(row.seconds as number).toBeGreaterThanOrEqual(0.9);
    expect(row.points_per_s_min as number).toBeLessThanOrEqual(row.points_per_s as number);
    expect(row.points_per_s_max as number).toBeGreaterThanOrEqual(row.points_per_s as number);
  }
  expect(json.rows.map((x) => x.ack_means)).toEqual(["power-loss-safe", "memory"]);
  expect(json.ratios).toEqual([
    expect.objectContaining({ of: "points/s", row: 1, versus: 2, counts_at: "sqlite-commit+fsync" }),
  ]);
  expect(r.out).toMatch(
    /ratio of points\/s: #1 ours\/websocket 1024 B ÷ #2 mosquitto\/batched 1024 B = [\d.]+ \(both counted at sqlite-commit\+fsync\)/,
  );
}, 600_000);
