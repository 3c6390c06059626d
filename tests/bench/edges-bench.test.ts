// The many-edges bench at a tiny size: every edge connects over its own connection to each system (ours, mosquitto,
// NATS JetStream, the Node receiver), its points are acknowledged, and each row carries where it counted, latency,
// CPU and RSS per process of the system, CPU per chunk, and no errors.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { cases, makeEdges, runEdgeLoad, runEdgesCase, runSystemCase, systems } from "../../bench/edges.js";
import { formatEdgesTable } from "../../bench/edges-table.js";
import { startCloudPeer } from "../../runtime/device-bench/cloud-peer.js";

it("runs N edges at R points/s each into one cloud peer and reports latency, the cloud's CPU and RSS, and errors", async () => {
  const row = await runEdgesCase({ edges: 6, rate: 50, durationS: 1.5, clients: 2, payload: 16 });
  expect(row).toMatchObject({ edges: 6, rate_per_edge: 50, connected: 6, errors: 0, offered_points_per_s: 300 });
  expect(row.note, String(row.note)).toBeUndefined();
  expect(row.acked_points_per_s as number).toBeGreaterThan(0);
  expect(row.p50_ms as number).toBeGreaterThan(0);
  expect(row.p99_ms as number).toBeGreaterThanOrEqual(row.p50_ms as number);
  expect(row).toMatchObject({
    system: "ours",
    counts_at: "ack after journal record + fdatasync",
    "cpu_%": { cloud: expect.any(Number) },
  });
  expect((row.rss_MiB as Record<string, number>).cloud).toBeGreaterThan(10);
  expect(row.acked_chunks_per_s as number).toBeGreaterThan(0);
  expect(row.cpu_us_per_chunk as number).toBeGreaterThan(0);
  // Every edge had its first point acked (its measurement made) before the schedule started.
  expect(row.first_ack_s).toEqual(expect.any(Number));
}, 300_000);

it("counts connections that end mid-run as errors with their reason, and the clients keep answering", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-edges-test-"));
  const cloud = await startCloudPeer(path.join(dir, "cloud"), { quic: false });
  try {
    const edges = await makeEdges(cloud.info, 3);
    // The cloud goes away as the window opens: every edge's connection ends while its timer still writes.
    const row = await runEdgeLoad(
      dir,
      cloud.info,
      edges,
      { edges: 3, rate: 100, durationS: 1.5, clients: 1, payload: 16 },
      { begin: () => cloud.stop(), end: () => ({}) },
    );
    expect(row).toMatchObject({ edges: 3, connected: 3 });
    expect(row.errors as number).toBeGreaterThanOrEqual(3);
    expect(String(row.note)).toMatch(/connection closed: /);
  } finally {
    await cloud.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);

it.each([
  ["mosquitto", "consumer sqlite-commit+fsync", ["mosquitto", "consumer"]],
  ["nats", "jetstream PubAck", ["nats-server"]],
  ["node", "ack after fdatasync", ["receiver"]],
])(
  "runs the same load into %s, counted where its row says, with each of its processes' CPU",
  async (system, countsAt, procs) => {
    const row = await runSystemCase(system as "mosquitto", {
      edges: 3,
      rate: 50,
      durationS: 1.5,
      clients: 1,
      payload: 16,
    });
    expect(row.note, String(row.note)).toBeUndefined();
    expect(row).toMatchObject({
      system,
      counts_at: countsAt,
      edges: 3,
      rate_per_edge: 50,
      connected: 3,
      errors: 0,
      offered_points_per_s: 150,
    });
    expect(row.acked_points_per_s as number).toBeGreaterThan(0);
    expect(row.p99_ms as number).toBeGreaterThanOrEqual(row.p50_ms as number);
    expect(Object.keys(row["cpu_%"] as object)).toEqual(procs);
    expect(row.cpu_us_per_chunk as number).toBeGreaterThan(0);
    expect(row["cpu_clients_%"]).toEqual(expect.any(Number));
  },
  300_000,
);

it("prints where each system counts, ours against the better peer and the Node receiver, and failed cases' notes", () => {
  const at = { edges: 10, rate_per_edge: 100, offered_points_per_s: 1000 };
  const text = formatEdgesTable([
    { system: "ours", ...at, acked_points_per_s: 900, p99_ms: 20, cpu_us_per_chunk: 30, "cpu_%": { cloud: 50 } },
    {
      system: "mosquitto",
      ...at,
      acked_points_per_s: 1000,
      p99_ms: 10,
      cpu_us_per_chunk: 20,
      "cpu_%": { mosquitto: 10, consumer: 30 },
    },
    { system: "nats", ...at, acked_points_per_s: 600, p99_ms: 5 },
    { system: "node", ...at, acked_points_per_s: 1000, cpu_us_per_chunk: 10 },
    { system: "nats", edges: 20, rate_per_edge: 5, note: "failed: nats-server not found" },
  ]);
  expect(text).toMatch(/mosquitto 10, consumer 30/);
  expect(text).toMatch(/^counts_at, mosquitto: the consumer, at its SQLite commit/m);
  expect(text).toContain(
    "10×100: ours acked points/s 0.9× and p99 2× the better peer's (mosquitto); CPU per chunk 3× the Node receiver's",
  );
  expect(text).toContain("note (row 5): failed: nats-server not found");
  const none = formatEdgesTable([
    { system: "ours", ...at, acked_points_per_s: 0, cpu_us_per_chunk: 700000 },
    { system: "node", ...at, acked_points_per_s: 1000, cpu_us_per_chunk: 10 },
  ]);
  expect(none).toContain(
    "10×100: ours CPU per chunk not compared with the Node receiver's (one of them acked under 10 % of the offer)",
  );
});

it("runs the five fleet loads on every system unless told the loads (--configs, or --edges and --rate) or --systems", () => {
  const argv = process.argv;
  try {
    process.argv = ["node", "edges.ts", "--duration", "2"];
    expect(cases().map((c) => [c.edges, c.rate, c.durationS, c.pingTimeoutS])).toEqual([
      [100, 1000, 2, 1],
      [300, 100, 2, 1],
      [1000, 20, 2, 1],
      [1000, 100, 2, 1],
      [3000, 10, 2, 1],
    ]);
    expect(systems()).toEqual(["ours", "mosquitto", "nats", "node"]);
    process.argv = ["node", "edges.ts", "--configs", "7x30,2×5", "--systems", "node,ours", "--ping-timeout", "10"];
    expect(cases().map((c) => [c.edges, c.rate, c.pingTimeoutS])).toEqual([
      [7, 30, 10],
      [2, 5, 10],
    ]);
    expect(systems()).toEqual(["node", "ours"]);
    process.argv = ["node", "edges.ts", "--edges", "7", "--rate", "30"];
    expect(cases().map((c) => [c.edges, c.rate])).toEqual([[7, 30]]);
    process.argv = ["node", "edges.ts", "--edges", "-1"];
    expect(() => cases()).toThrow(/--edges must be a positive number/);
    process.argv = ["node", "edges.ts", "--configs", "100by10"];
    expect(() => cases()).toThrow(/--configs: EDGESxRATE/);
    process.argv = ["node", "edges.ts", "--systems", "ours,kafka"];
    expect(() => systems()).toThrow(/--systems: some of ours, mosquitto, nats, node, not "kafka"/);
  } finally {
    process.argv = argv;
  }
});
