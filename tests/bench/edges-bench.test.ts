// The many-edges bench at a tiny size: every edge connects over its own iSCP connection, its points are acked
// (after the cloud's commit), and the row carries latency, the cloud's CPU and RSS, and no errors.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { cases, makeEdges, runEdgeLoad, runEdgesCase } from "../../bench/edges.js";
import { startCloudPeer } from "../../runtime/bench/cloud-peer.js";

it("runs N edges at R points/s each into one cloud peer and reports latency, the cloud's CPU and RSS, and errors", async () => {
  const row = await runEdgesCase({ edges: 6, rate: 50, durationS: 1.5, clients: 2, payload: 16 });
  expect(row).toMatchObject({ edges: 6, rate_per_edge: 50, connected: 6, errors: 0, offered_points_per_s: 300 });
  expect(row.note, String(row.note)).toBeUndefined();
  expect(row.acked_points_per_s as number).toBeGreaterThan(0);
  expect(row.p50_ms as number).toBeGreaterThan(0);
  expect(row.p99_ms as number).toBeGreaterThanOrEqual(row.p50_ms as number);
  expect(row["cpu_cloud_%"]).toEqual(expect.any(Number));
  expect(row.rss_cloud_MiB as number).toBeGreaterThan(10);
  // Every edge had its first point acked (its measurement made) before the schedule started.
  expect(row.first_ack_s).toEqual(expect.any(Number));
}, 300_000);

it("counts connections that end mid-run as errors with their reason, and the clients keep answering", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-edges-test-"));
  const cloud = await startCloudPeer(path.join(dir, "cloud"), { quic: false });
  try {
    const edges = await makeEdges(cloud.info, 3);
    // The cloud goes away as the window opens: every edge's connection ends while its timer still writes.
    const row = await runEdgeLoad(dir, cloud.info, edges, { edges: 3, rate: 100, durationS: 1.5, clients: 1, payload: 16 }, { begin: () => cloud.stop(), end: () => ({}) });
    expect(row).toMatchObject({ edges: 3, connected: 3 });
    expect(row.errors as number).toBeGreaterThanOrEqual(3);
    expect(String(row.note)).toMatch(/connection closed: /);
  } finally {
    await cloud.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);

it("runs 100 × 1,000 and 1,000 × 100 unless told N and R", () => {
  const argv = process.argv;
  try {
    process.argv = ["node", "edges.ts", "--duration", "2"];
    expect(cases().map((c) => [c.edges, c.rate, c.durationS])).toEqual([
      [100, 1000, 2],
      [1000, 100, 2],
    ]);
    process.argv = ["node", "edges.ts", "--edges", "7", "--rate", "30"];
    expect(cases().map((c) => [c.edges, c.rate])).toEqual([[7, 30]]);
    process.argv = ["node", "edges.ts", "--edges", "-1"];
    expect(() => cases()).toThrow(/--edges must be a positive number/);
  } finally {
    process.argv = argv;
  }
});
