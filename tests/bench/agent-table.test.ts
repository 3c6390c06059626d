// The agent bench's table: what counts_at and ack_means say for each path, the median of repetitions, and
// ratios only between rows that count at the same point, each naming the two rows it compares.
import { expect, it } from "vitest";
import { ackMeans, countsAt, formatAgentTable, medianRow, ratios } from "../../bench/agent-table.js";
import type { Row } from "../../runtime/device-bench/table.js";

const row = (path: string, points_per_s: number, counts_at: string, extra: Row = {}): Row => ({
  case: "throughput",
  path,
  payload_B: 16,
  rate: "max",
  points_per_s,
  counts_at,
  ...extra,
});

it("says where each path counts and what its acknowledgment promised, from the cloud's durability", () => {
  expect(countsAt("power-loss", 16)).toBe("sqlite-commit+fsync");
  expect(countsAt("process-crash", 16)).toBe("sqlite-commit");
  // A chunk above one database page goes to a payload file, fdatasync'ed before its row commits.
  expect(countsAt("process-crash", 8192 * 16)).toBe("sqlite-commit+payload-fsync");
  expect(ackMeans("ours/websocket", "power-loss")).toBe("power-loss-safe");
  expect(ackMeans("ours/quic,flush=immediately", "process-crash")).toBe("process-crash-safe");
  expect(ackMeans("mosquitto/batched", "power-loss")).toBe("memory");
  expect(ackMeans("nats", "power-loss")).toBe("process-crash-safe");
  expect(() => ackMeans("kafka", "power-loss")).toThrow(/no acknowledgment meaning/);
});

it("keeps the median repetition's figures with the min-max of points/s, and counts failed repetitions", () => {
  const m = medianRow([
    row("ours/websocket", 300, "x", { seconds: 3 }),
    row("ours/websocket", 100, "x", { seconds: 1 }),
    row("ours/websocket", 200, "x", { seconds: 2 }),
  ]);
  expect(m).toMatchObject({ points_per_s: 200, seconds: 2, reps: 3, points_per_s_min: 100, points_per_s_max: 300 });
  const f = medianRow([row("nats", 50, "x"), { case: "throughput", path: "nats", note: "failed: broker gone" }]);
  expect(f).toMatchObject({ points_per_s: 50, reps: 2, note: "failed: broker gone; 1 of 2 repetitions failed" });
});

it("compares ours only with peer rows of the same case that count at the same point", () => {
  const rows = [
    row("ours/websocket", 1000, "sqlite-commit+payload-fsync"),
    row("mosquitto", 100, "sqlite-commit"),
    row("mosquitto/batched", 500, "sqlite-commit+payload-fsync"),
    row("nats/batched", 400, "sqlite-commit+payload-fsync", { payload_B: 1024 }),
    { ...row("ours/websocket", NaN, "sqlite-commit"), case: "latency", rate: 10000, p99_ms: 4 },
    { ...row("mosquitto", NaN, "sqlite-commit"), case: "latency", rate: 10000, p99_ms: 2 },
  ];
  const r = ratios(rows);
  expect(r.ratios).toEqual([
    { of: "points/s", row: 1, versus: 3, value: 2, counts_at: "sqlite-commit+payload-fsync" },
    { of: "p99_ms", row: 5, versus: 6, value: 2, counts_at: "sqlite-commit" },
  ]);
  expect(r.skipped).toEqual([{ row: 1, versus: 2, why: "counts_at sqlite-commit+payload-fsync vs sqlite-commit" }]);
  const text = formatAgentTable(rows, r);
  expect(text).toContain(
    "ratio of points/s: #1 ours/websocket 16 B ÷ #3 mosquitto/batched 16 B = 2 (both counted at sqlite-commit+payload-fsync)",
  );
  expect(text).toContain(
    "ratio of p99_ms: #5 ours/websocket 16 B at 10000 points/s ÷ #6 mosquitto 16 B at 10000 points/s = 2",
  );
  expect(text).toContain(
    "not compared: #1 ours/websocket 16 B with #2 mosquitto 16 B: counts_at sqlite-commit+payload-fsync vs sqlite-commit",
  );
  expect(text.split("\n")[0]).toMatch(/^#\s+case\s+path\s+payload_B\s+points_per_s\s+p99_ms\s+counts_at$/);
});
