// Upstream settings end to end over WebSocket: `persist: false` streams live without storing (in the agent
// or the cloud), `qos: unreliable` with `flush_policy: immediately` still stores every point once, and
// `recover: false` drops (and counts) what an outage kept from the cloud instead of uploading it later.
// The agent's own downstream, filtered on its own edge, shows what went out live.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { DataPoint } from "../../runtime/datapoint.js";
import { decodeInto } from "../support/datapath.js";
import { IscpV2CompatDecoder } from "../../runtime/ipc/iscp-v2-compat.js";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, startStack, until, type Stack } from "./stack.js";
import { SqliteDb } from "../../cloud/database/db.js";

/** The stopped cloud's record of its resumable upstreams, removed. */
async function forgetUpstreams(file: string): Promise<void> {
  const db = await SqliteDb.open(file);
  try {
    await db.run("DELETE FROM iscp_upstreams");
  } finally {
    await db.close();
  }
}

let s: Stack;
const live: DataPoint[] = [];
let reader: fs.ReadStream | undefined;

beforeAll(async () => {
  s = await startStack();
  await s.connect();
  await s.put("/upstreams", {
    id: "unrel",
    persist: true,
    recover: true,
    qos: "unreliable",
    flush_policy: "immediately",
  });
  await s.put("/upstreams", {
    id: "volatile",
    persist: false,
    recover: false,
    qos: "partial",
    flush_policy: "interval",
    flush_interval: 5,
  });
  await s.put("/upstreams", {
    id: "norecover",
    persist: true,
    recover: false,
    qos: "partial",
    flush_policy: "interval",
    flush_interval: 5,
  });
  for (const id of ["unrel", "volatile", "norecover"])
    await s.put("/device-connectors/upstream", {
      id,
      format: "iscp-v2-compat",
      dest_ids: [id],
      data_name_prefix: `${id}/`,
      ipc: { type: "fifo", path: s.fifo(id) },
    });
  await s.put("/device-connectors/downstream", {
    id: "mirror",
    format: "iscp-v2-compat",
    data_name_prefix: "",
    ipc: { type: "fifo", path: s.fifo("mirror") },
  });
  await s.put("/downstreams", {
    id: "self",
    dest_ids: ["mirror"],
    qos: "unreliable",
    filters: [{ src_edge_uuid: s.cloud.edgeUuid, data_filters: [{ type: "#", name: "#" }] }],
  });
  await until(() => fs.existsSync(s.fifo("mirror")), 30_000, "mirror FIFO");
  const dec = new IscpV2CompatDecoder({ srcId: "mirror" });
  reader = fs.createReadStream(s.fifo("mirror"));
  reader.on("data", (b) => decodeInto(dec, b as Buffer, live));
  for (const id of ["self", "unrel", "volatile", "norecover"]) {
    const path = id === "self" ? "/downstreams/self/state" : `/upstreams/${id}/state`;
    await until(
      async () => ["connected", "quiet"].includes((await s.agentApi.get<{ code: string }>(path)).body.code),
      30_000,
      `${id} connected`,
    );
  }
}, 120_000);
afterAll(async () => {
  reader?.destroy();
  await s?.close();
});

const liveIndices = (prefix: string) =>
  live.filter((p) => p.name.startsWith(prefix)).map((p) => Buffer.from(p.payload).readUInt32BE(0));
const state = async (id: string) =>
  (await s.agentApi.get<{ code: string; bitrate: number }>(`/upstreams/${id}/state`)).body;

it("persist: false streams live only and shows its traffic; unreliable + immediately stores every point once", async () => {
  const unrel = await openFifoWriter(s.fifo("unrel"));
  const vol = await openFifoWriter(s.fifo("volatile"));
  let maxBitrate = 0;
  try {
    // 3 s of writing, so the once-a-second state sees the volatile upstream's traffic.
    for (let i = 0; i < 30; i++) {
      await writeNumbered(unrel, i * 20, i * 20 + 20, { name: "n" });
      await writeNumbered(vol, i * 20, i * 20 + 20, { name: "n" });
      await new Promise((r) => setTimeout(r, 100));
      maxBitrate = Math.max(maxBitrate, (await state("volatile")).bitrate);
    }
  } finally {
    await unrel.close();
    await vol.close();
  }
  expect(maxBitrate).toBeGreaterThan(0);
  const got = await until(
    async () => {
      const i = await cloudIndices(s, "unrel/n");
      return i.length >= 600 && i;
    },
    30_000,
    "600 unreliable points stored",
  );
  expect(got).toEqual(range(0, 600));
  await until(() => liveIndices("volatile/").length >= 600, 30_000, "600 volatile points live");
  expect(liveIndices("volatile/")).toEqual(range(0, 600));
  // The cloud does not store them.
  expect(await cloudIndices(s, "volatile/n")).toEqual([]);
}, 120_000);

it("recover: false drops and counts what an outage kept from the cloud; nothing is uploaded later", async () => {
  const fh = await openFifoWriter(s.fifo("norecover"));
  const dropped0 = s.agent!.dataPath.queue.stats.droppedChunks;
  try {
    await writeNumbered(fh, 0, 300, { name: "r" });
    await until(async () => (await cloudIndices(s, "norecover/r")).length === 300, 30_000, "300 points in real time");
    await s.stopCloud();
    await until(
      async () => !["connected", "quiet"].includes((await state("norecover")).code),
      30_000,
      "upstream notices the outage",
    );
    await writeNumbered(fh, 300, 800, { name: "r" });
    await new Promise((r) => setTimeout(r, 1000));
    // A cloud restarted within the stream's expiry takes its upstream back (the resume goes on in real time);
    // here it comes back without it, as after the expiry, so sending has failed and nothing is recovered.
    await forgetUpstreams(path.join(s.dir, "cloud", "cloud.db"));
    await s.startCloud();
    await until(async () => ["connected", "quiet"].includes((await state("norecover")).code), 30_000, "upstream back");
    await until(() => s.agent!.dataPath.queue.stats.droppedChunks > dropped0, 30_000, "dropped chunks counted");
    await new Promise((r) => setTimeout(r, 1000));
    await writeNumbered(fh, 800, 1000, { name: "r" });
  } finally {
    await fh.close();
  }
  await until(
    async () => (await cloudIndices(s, "norecover/r")).some((i) => i >= 800),
    30_000,
    "points after the outage",
  );
  await until(
    async () => (await s.agentApi.get<{ code: string }>("/deferred-upload/state")).body.code === "none",
    30_000,
    "deferred upload idle",
  );
  await new Promise((r) => setTimeout(r, 1000));
  const got = await cloudIndices(s, "norecover/r");
  expect(new Set(got).size).toBe(got.length);
  expect(got.filter((i) => i < 300)).toEqual(range(0, 300));
  expect(got.filter((i) => i >= 800)).toEqual(range(800, 1000));
  expect(got.filter((i) => i >= 300 && i < 800)).toEqual([]);
  const pending = (await s.agentApi.get<{ items: { pending_data_size: number }[] }>("/measurements")).body.items.reduce(
    (n, m) => n + m.pending_data_size,
    0,
  );
  expect(pending).toBe(0);
}, 120_000);
