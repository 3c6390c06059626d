// The cloud goes away mid-measurement and comes back: every point a connector wrote reaches the cloud
// exactly once, part in real time and part by deferred upload.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, startConnectedStack, until, type Stack } from "./stack.js";

let s: Stack;
beforeAll(async () => void (s = await startConnectedStack()), 120_000);
afterAll(async () => s?.close());

const upstreamState = async () => (await s.agentApi.get<{ code: string }>("/upstreams/rt/state")).body.code;

it("delivers every point exactly once across a cloud outage", async () => {
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    await writeNumbered(fh, 0, 300);
    await until(async () => (await cloudIndices(s)).length === 300, 30_000, "300 points in real time");

    await s.stopCloud();
    await until(
      async () => (await upstreamState()) !== "connected" && (await upstreamState()) !== "quiet",
      30_000,
      "upstream notices the outage",
    );
    await writeNumbered(fh, 300, 800);
    await new Promise((r) => setTimeout(r, 1000));

    await s.startCloud();
    await writeNumbered(fh, 800, 1000);
  } finally {
    await fh.close();
  }
  const got = await until(
    async () => {
      const i = await cloudIndices(s);
      return i.length >= 1000 && i;
    },
    60_000,
    "1000 points in the cloud",
  );
  // Nothing lost, nothing twice.
  expect(got).toEqual(range(0, 1000));
  // One measurement: the restarted cloud took the rest of it (by deferred upload, as the broker forgot the stream).
  const [, ...others] = await s.measurements();
  expect(others).toEqual([]);
  // Deferred upload drained what it held.
  await until(
    async () => (await s.agentApi.get<{ code: string }>("/deferred-upload/state")).body.code === "none",
    30_000,
    "deferred upload idle",
  );
}, 120_000);

it("sends points routed to `deferred` only by deferred upload, exactly once", async () => {
  await s.put("/device-connectors/upstream", {
    id: "dd",
    format: "iscp-v2-compat",
    dest_ids: ["deferred"],
    data_name_prefix: "dd/",
    ipc: { type: "fifo", path: s.fifo("dd") },
  });
  const fh = await openFifoWriter(s.fifo("dd"));
  try {
    await writeNumbered(fh, 0, 500, { name: "slow" });
  } finally {
    await fh.close();
  }
  const got = await until(
    async () => {
      const i = await cloudIndices(s, "dd/slow");
      return i.length >= 500 && i;
    },
    30_000,
    "500 deferred points in the cloud",
  );
  expect(got).toEqual(range(0, 500));

  // Once the measurement ends, the cloud is told it is complete, though its deferred upload finished earlier.
  await s.agentApi.delete("/device-connectors/upstream/dd");
  await s.agentApi.delete("/device-connectors/upstream/dc");
  const done = await until(
    async () => {
      const ms = await s.measurements();
      return ms.length > 0 && ms.every((m) => (m as { completed?: boolean }).completed === true) && ms;
    },
    30_000,
    "every measurement completed in the cloud",
  );
  expect(done.map((m) => m.received_data_points)).toEqual([1500]);
}, 120_000);
