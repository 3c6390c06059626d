// `npm run bench -- scale-out` at a tiny size: 1 and 2 instances on PostgreSQL and NATS behind the balancer, and
// one on SQLite; every row carries what a user reads (acked points/s, p50/p99, CPU and RSS per instance,
// PostgreSQL's CPU, the cost per stored point, the downstream latency on another instance) and no errors.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { cases, compareToOne } from "../../bench/scale-out.js";
import { benchTemp, runBench as runBenchIn } from "./run-bench.js";

const tmp = benchTemp("bench-scale-out-test-");
const runBench = (args: string[]) => runBenchIn(tmp, "scale-out", args);

it("runs the edges on 1 and 2 instances over PostgreSQL and 1 on SQLite, with per-instance figures and cross-instance latency", async () => {
  const r = await runBench(["--edges", "4", "--rate", "50", "--duration", "2", "--instances", "1,2", "--sample", "2"]);
  expect(r.code, r.err.slice(-2000)).toBe(0);
  const json = JSON.parse(fs.readFileSync(path.join(tmp, "results", "scale-out.json"), "utf8")) as {
    rows: Array<Record<string, unknown>>;
  };
  expect(json.rows.map((x) => [x.backend, x.instances])).toEqual([
    ["postgres", 1],
    ["postgres", 2],
    ["sqlite", 1],
  ]);
  for (const row of json.rows) {
    const n = row.instances as number;
    expect(row, JSON.stringify(row)).toMatchObject({
      edges: 4,
      rate_per_edge: 50,
      connected: 4,
      errors: 0,
      offered_points_per_s: 200,
    });
    // At this tiny offer one instance may carry it all: then its row says the offer is too low to show scale-out.
    if (row.note !== undefined)
      expect([row.backend, n, row.note]).toEqual([
        "postgres",
        1,
        expect.stringMatching(/^one instance carried the whole offer: raise --offered/),
      ]);
    expect(row["carried_%"] as number).toBeGreaterThan(0);
    if (row.backend === "postgres") expect(row.vs_1_instance).toEqual(expect.any(Number));
    expect(row.cpu_s_per_M_points_per_instance).toEqual(Array.from({ length: n }, () => expect.any(Number)));
    expect(row.acked_points_per_s as number).toBeGreaterThan(0);
    expect(row.p99_ms as number).toBeGreaterThanOrEqual(row.p50_ms as number);
    expect(row["cpu_%_per_instance"]).toEqual(Array.from({ length: n }, () => expect.any(Number)));
    expect(
      (row.rss_MiB_per_instance as number[]).every((m) => m > 10),
      String(row.rss_MiB_per_instance),
    ).toBe(true);
    expect(row.cpu_s_per_M_points as number).toBeGreaterThan(0);
    // Points of the sampled edges arrived downstream, timed from their due time.
    expect(row.downstream).toBe(n > 1 ? "other instance" : "same instance");
    expect(row.downstream_samples as number).toBeGreaterThan(0);
    expect(row.downstream_p99_ms as number).toBeGreaterThanOrEqual(row.downstream_p50_ms as number);
  }
  expect(json.rows.map((x) => typeof x["cpu_postgres_%"])).toEqual(["number", "number", "object"]);
  expect(r.out).toMatch(/== scale-out ==/);
}, 600_000);

it("runs 1,000 edges × 100 points/s on 1, 2, 3 instances and SQLite unless told otherwise", () => {
  const argv = process.argv;
  try {
    process.argv = ["node", "scale-out.ts"];
    expect(cases().map((c) => [c.backend, c.instances, c.edges, c.rate, c.durationS])).toEqual([
      ["postgres", 1, 1000, 100, 10],
      ["postgres", 2, 1000, 100, 10],
      ["postgres", 3, 1000, 100, 10],
      ["sqlite", 1, 1000, 100, 10],
    ]);
    process.argv = ["node", "scale-out.ts", "--instances", "2", "--no-sqlite", "--edges", "8"];
    expect(cases().map((c) => [c.backend, c.instances, c.edges])).toEqual([["postgres", 2, 8]]);
    process.argv = ["node", "scale-out.ts", "--edges", "500", "--offered", "200000"];
    expect(cases().map((c) => [c.edges, c.rate])[0]).toEqual([500, 400]);
    process.argv = ["node", "scale-out.ts", "--rate", "5", "--offered", "200000"];
    expect(() => cases()).toThrow(/--offered .* or --rate .*, not both/);
    process.argv = ["node", "scale-out.ts", "--instances", "0,x"];
    expect(() => cases()).toThrow(/--instances: whole numbers from 1 to 16/);
  } finally {
    process.argv = argv;
  }
});

it("compares each PostgreSQL row's acked rate with one instance's, and says when one instance carried the whole offer", () => {
  const rows: Array<Record<string, unknown>> = [
    { backend: "postgres", instances: 1, acked_points_per_s: 1000, "carried_%": 40 },
    { backend: "postgres", instances: 2, acked_points_per_s: 1700, "carried_%": 68 },
    { backend: "sqlite", instances: 1, acked_points_per_s: 2500, "carried_%": 100 },
  ];
  compareToOne(rows);
  expect(rows.map((r) => r.vs_1_instance)).toEqual([1, 1.7, undefined]);
  expect(rows.map((r) => r.note)).toEqual([undefined, undefined, undefined]);
  const all = [{ backend: "postgres", instances: 1, acked_points_per_s: 200, "carried_%": 100 }] as Array<
    Record<string, unknown>
  >;
  compareToOne(all);
  expect(all[0]!.note).toMatch(/^one instance carried the whole offer/);
});
