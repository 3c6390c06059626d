// docs/agent-api.md's device connector example routes to an upstream and to `deferred`: deferred upload is the
// catch-up path for what real time missed, so the cloud holds each point once (500 written, 500 stored,
// expected_data_points 500), and what an outage kept from real time still arrives, once.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, startStack, until, type Stack } from "./stack.js";

let s: Stack;
beforeAll(async () => {
  s = await startStack();
  await s.connect();
  // As documented: an upstream with its defaults, and the connector's dest_ids ["default", "deferred"].
  await s.put("/upstreams", { id: "default" });
  await s.put("/device-connectors/upstream", {
    id: "dc-can",
    format: "iscp-v2-compat",
    data_name_prefix: "v1/10/",
    dest_ids: ["default", "deferred"],
    ipc: { type: "fifo", path: s.fifo("dc-can") },
  });
  await until(
    async () =>
      ["connected", "quiet"].includes((await s.agentApi.get<{ code: string }>("/upstreams/default/state")).body.code),
    30_000,
    "default connected",
  );
}, 120_000);
afterAll(async () => s?.close());

const settled = async () => {
  await until(
    async () => (await s.agentApi.get<{ code: string }>("/deferred-upload/state")).body.code === "none",
    30_000,
    "deferred upload idle",
  );
  const pending = (await s.agentApi.get<{ items: { pending_data_size: number }[] }>("/measurements")).body.items.reduce(
    (n, m) => n + m.pending_data_size,
    0,
  );
  expect(pending).toBe(0);
};

it("stores each point once with dest_ids [upstream, deferred]: 500 written, 500 stored, 500 expected", async () => {
  const fh = await openFifoWriter(s.fifo("dc-can"));
  try {
    await writeNumbered(fh, 0, 500, { name: "can" });
    await until(async () => (await cloudIndices(s, "can")).length >= 500, 30_000, "500 points stored");
  } finally {
    await fh.close();
  }
  await s.agent!.dataPath.endRun();
  await settled();
  expect(await cloudIndices(s, "can")).toEqual(range(0, 500));
  const [m] = await s.measurements();
  const r = await fetch(`${s.peer.url}/api/v1/projects/${s.cloud.projectUuid}/measurements/${m!.uuid}`, {
    headers: { "X-Intdash-Token": s.cloud.token },
  });
  expect(await r.json()).toMatchObject({
    received_data_points: 500,
    sequences: { expected_data_points: 500, received_data_points: 500, status: "completed" },
  });
}, 120_000);

it("uploads later, once, what an outage kept from real time, also for an upstream with recover: false", async () => {
  await s.put("/upstreams", { id: "lossy", recover: false });
  await s.put("/device-connectors/upstream", {
    id: "dc-lossy",
    format: "iscp-v2-compat",
    dest_ids: ["lossy", "deferred"],
    ipc: { type: "fifo", path: s.fifo("dc-lossy") },
  });
  const state = async () => (await s.agentApi.get<{ code: string }>("/upstreams/lossy/state")).body.code;
  await until(async () => ["connected", "quiet"].includes(await state()), 30_000, "lossy connected");
  const fh = await openFifoWriter(s.fifo("dc-lossy"));
  try {
    await writeNumbered(fh, 0, 200, { name: "lossy" });
    await until(async () => (await cloudIndices(s, "lossy")).length >= 200, 30_000, "200 points in real time");
    await s.stopCloud();
    await until(async () => !["connected", "quiet"].includes(await state()), 30_000, "the upstream notices the outage");
    await writeNumbered(fh, 200, 400, { name: "lossy" });
    await new Promise((r) => setTimeout(r, 1000));
    await s.startCloud();
    await until(async () => ["connected", "quiet"].includes(await state()), 30_000, "the upstream is back");
  } finally {
    await fh.close();
  }
  await s.agent!.dataPath.endRun();
  await until(async () => (await cloudIndices(s, "lossy")).length >= 400, 30_000, "400 points stored");
  await settled();
  expect(await cloudIndices(s, "lossy")).toEqual(range(0, 400));
}, 120_000);
