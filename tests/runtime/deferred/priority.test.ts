// Deferred upload against the real cloud peer and a real LMDB queue: what it uploads arrives once and is
// released locally, and `priority` decides how it shares the link with real time (runtime/deferred).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createActor } from "xstate";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { apiClient, ensureDemoCloud } from "../../../bin/demo-setup.js";
import { fetchToken } from "../../../runtime/deferred/cloud-auth.js";
import { TICK_MS, type Session } from "../../../machines/vocabulary.js";
import { deferredUploadMachine, reportDeferred } from "../../../machines/deferred-upload.js";
import { openerActor } from "../../../machines/link.js";
import type { DataPoint } from "../../../runtime/datapoint.js";
import { MeasurementRestClient } from "../../../runtime/deferred/rest-client.js";
import { deferredUploaderOpener } from "../../../runtime/deferred/uploader.js";
import { nextUploadBatch } from "../../../runtime/deferred/store-data-chunks.js";
import { DurableQueue } from "../../../runtime/queue/store.js";
import type { DeferredUploadSettings } from "../../../runtime/settings/schemas.js";
import { adminToken } from "../../cloud/accounts/helpers.js";
import { startTestPeer, type TestPeer } from "../../cloud/harness.js";

let dir: string;
let peer: TestPeer;
let session: Session;
let admin: string;
let projectUuid: string;
let queue: DurableQueue;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "deferred-"));
  peer = await startTestPeer({ dataDir: path.join(dir, "cloud") });
  admin = await adminToken(peer);
  const demo = await ensureDemoCloud(dir, apiClient(peer.url, admin));
  projectUuid = demo.projectUuid;
  const connection = {
    server_url: peer.url,
    project_uuid: demo.projectUuid,
    edge_uuid: demo.edgeUuid,
    client_secret: demo.edgeSecret,
  };
  session = {
    connection,
    transport: { protocol: "websocket", send_queue_size: 4096 },
    accessToken: (await fetchToken(connection)).accessToken,
  };
}, 120_000);
afterAll(async () => {
  await queue?.close();
  await peer?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

let n = 0;
beforeEach(async () => {
  await queue?.close();
  queue = await DurableQueue.open({ dir: path.join(dir, `queue-${++n}`), capacityMiB: 100, limitDataStorage: true });
});

const points = (count: number): DataPoint[] =>
  Array.from({ length: count }, (_, i) => ({
    elapsedNs: i * 1_000_000,
    type: "bytes",
    name: "p",
    payload: Buffer.from([i & 0xff]),
    srcId: "dc",
  }));

/** An ended measurement whose one sequence was left with `chunks` unsent chunks of 10 points. */
async function pendingMeasurement(chunks: number): Promise<string> {
  const uuid = crypto.randomUUID();
  queue.startMeasurement(uuid, 1_700_000_000_000_000_000n);
  const seq = queue.openSequence(uuid, "rt", crypto.randomUUID(), true);
  for (let i = 0; i < chunks; i++) await queue.append(seq.ord, points(10)).durable;
  await queue.closeSequence(seq.ord);
  await queue.endMeasurement(uuid);
  return uuid;
}

async function cloudMeasurement(uuid: string): Promise<{
  status: number;
  body: { received_data_points?: number; status?: string; completed?: boolean; sequences?: unknown };
}> {
  const r = await fetch(`${peer.url}/api/v1/projects/${projectUuid}/measurements/${uuid}`, {
    headers: { "X-Intdash-Token": admin },
  });
  return {
    status: r.status,
    body: (await r.json()) as {
      received_data_points?: number;
      status?: string;
      completed?: boolean;
      sequences?: unknown;
    },
  };
}

interface Run {
  events: string[];
  done: Promise<string>;
  close(): void;
}

function upload(
  priority: DeferredUploadSettings["priority"],
  realtime: { busy(): boolean; setHoldRealtime(h: boolean): void },
): Run {
  const events: string[] = [];
  let finish!: (s: string) => void;
  const done = new Promise<string>((r) => (finish = r));
  const settings: DeferredUploadSettings = { priority, limit_data_storage: true, data_storage_capacity: 100 };
  const h = deferredUploaderOpener({ queue, realtime, batchBytes: 200 })(
    { settings, session },
    {
      opened: () => events.push("opened"),
      data: () => events.push("data"),
      closed: (r) => finish(`closed: ${r}`),
      failed: (r) => finish(`failed: ${r}`),
    },
  );
  return { events, done, close: () => void h.close() };
}

it("uploads a measurement's pending chunks in several requests, releases them, and completes it", async () => {
  const uuid = await pendingMeasurement(30);
  const run = upload("same_as_realtime", {
    busy: () => true,
    setHoldRealtime: () => expect.fail("same_as_realtime holds nothing"),
  });
  expect(await run.done).toBe("closed: everything stored has been uploaded");
  expect(run.events.filter((e) => e === "data").length).toBeGreaterThan(1);
  expect(queue.getMeasurement(uuid)).toMatchObject({ chunkCount: 0, pendingDataSize: 0 });
  const m = await cloudMeasurement(uuid);
  expect(m.body).toMatchObject({ received_data_points: 300, status: "finished" });
});

it("drops a stored chunk that cannot be read, with a warning, and uploads the rest", async () => {
  const uuid = crypto.randomUUID();
  queue.startMeasurement(uuid, 1_700_000_000_000_000_000n);
  const seq = queue.openSequence(uuid, "rt", crypto.randomUUID(), true);
  await queue.append(seq.ord, points(10)).durable;
  await queue.appendEncoded(seq.ord, Buffer.alloc(16 + 12, 0xff), 10).durable; // damaged bytes
  await queue.append(seq.ord, points(10)).durable;
  await queue.closeSequence(seq.ord);
  await queue.endMeasurement(uuid);
  const run = upload("same_as_realtime", { busy: () => false, setHoldRealtime: () => undefined });
  expect(await run.done).toBe("closed: everything stored has been uploaded");
  expect(queue.getMeasurement(uuid)).toMatchObject({ chunkCount: 0, pendingDataSize: 0 });
  expect((await cloudMeasurement(uuid)).body).toMatchObject({ received_data_points: 20 });
});

it("uploads again without duplicates what the cloud already holds (skipped counts as done)", async () => {
  const uuid = await pendingMeasurement(5);
  // The same chunks stored a second time under the same sequence (as after a lost acknowledgement).
  const seq = queue.sequencesOf(uuid)[0]!;
  const first = upload("same_as_realtime", { busy: () => false, setHoldRealtime: () => {} });
  expect(await first.done).toMatch(/^closed/);
  const again = await DurableQueue.open({
    dir: path.join(dir, `queue-again-${n}`),
    capacityMiB: 100,
    limitDataStorage: true,
  });
  again.startMeasurement(uuid, 1_700_000_000_000_000_000n);
  const copy = again.openSequence(uuid, "rt", seq.uuid, true);
  for (let i = 0; i < 5; i++) await again.append(copy.ord, points(10)).durable;
  await again.closeSequence(copy.ord);
  await again.endMeasurement(uuid);
  const h = deferredUploaderOpener({ queue: again, realtime: { busy: () => false, setHoldRealtime: () => {} } });
  const closed = await new Promise<string>((resolve) => {
    h(
      { settings: { priority: "same_as_realtime", limit_data_storage: true, data_storage_capacity: 100 }, session },
      { opened() {}, data() {}, closed: resolve, failed: resolve },
    );
  });
  expect(closed).toBe("everything stored has been uploaded");
  expect(again.getMeasurement(uuid)).toMatchObject({ chunkCount: 0 });
  await again.close();
  expect((await cloudMeasurement(uuid)).body.received_data_points).toBe(50);
});

it("lower_than_realtime waits while real time has chunks waiting", async () => {
  const uuid = await pendingMeasurement(3);
  let busy = true;
  const run = upload("lower_than_realtime", {
    busy: () => busy,
    setHoldRealtime: () => expect.fail("lower_than_realtime holds nothing"),
  });
  await new Promise((r) => setTimeout(r, 600));
  expect(run.events).not.toContain("data");
  expect((await cloudMeasurement(uuid)).status).toBe(404);
  expect(queue.getMeasurement(uuid)!.chunkCount).toBe(3);
  busy = false;
  expect(await run.done).toMatch(/^closed/);
  expect((await cloudMeasurement(uuid)).body.received_data_points).toBe(30);
});

it("higher_than_realtime holds real time back for as long as it uploads", async () => {
  const uuid = await pendingMeasurement(20);
  const holds: { hold: boolean; pending: number }[] = [];
  const run = upload("higher_than_realtime", {
    busy: () => true,
    setHoldRealtime: (hold) => holds.push({ hold, pending: queue.getMeasurement(uuid)!.chunkCount }),
  });
  expect(await run.done).toMatch(/^closed/);
  await new Promise((r) => setTimeout(r, 50));
  // Held before the first chunk left, released only after the last was stored.
  expect(holds).toEqual([
    { hold: true, pending: 20 },
    { hold: false, pending: 0 },
  ]);
});

it("fails with the cloud's reason, keeps the data, and never holds real time after it stopped", async () => {
  const uuid = await pendingMeasurement(2);
  const holds: boolean[] = [];
  const bad: Session = { ...session, accessToken: "not-a-token" };
  const h = deferredUploaderOpener({ queue, realtime: { busy: () => false, setHoldRealtime: (x) => holds.push(x) } });
  const result = await new Promise<string>((resolve) => {
    h(
      {
        settings: { priority: "higher_than_realtime", limit_data_storage: true, data_storage_capacity: 100 },
        session: bad,
      },
      {
        opened() {},
        data() {},
        closed: (r) => resolve(`closed: ${r}`),
        failed: (r) => resolve(`failed: ${r}`),
      },
    );
  });
  expect(result).toMatch(/^failed: POST \/measurements\/[0-9a-f-]+ failed \(401\)/);
  expect(queue.getMeasurement(uuid)!.chunkCount).toBe(2);
  await new Promise((r) => setTimeout(r, 20));
  expect(holds).toEqual([true, false]);
});

it("completes a measurement uploaded while it was being taken once it ends, also after an agent restart", async () => {
  const uuid = crypto.randomUUID();
  queue.startMeasurement(uuid, 1_700_000_000_000_000_000n);
  // The `deferred` destination's sequence: uploaded while still open.
  const seq = queue.openSequence(uuid, "deferred", crypto.randomUUID(), true, false);
  for (let i = 0; i < 4; i++) await queue.append(seq.ord, points(10)).durable;
  expect(await upload("same_as_realtime", { busy: () => false, setHoldRealtime: () => {} }).done).toMatch(/^closed/);
  expect((await cloudMeasurement(uuid)).body).toMatchObject({ received_data_points: 40, completed: false });

  // It ends with nothing left to upload; the agent restarts before the uploader runs again.
  await queue.closeSequence(seq.ord);
  await queue.endMeasurement(uuid);
  await queue.close();
  queue = await DurableQueue.open({ dir: path.join(dir, `queue-${n}`), capacityMiB: 100, limitDataStorage: true });
  expect(queue.getMeasurement(uuid)).toMatchObject({ chunkCount: 0 });
  expect(queue.completionsDue().map((m) => m.uuid)).toEqual([uuid]);

  expect(await upload("same_as_realtime", { busy: () => false, setHoldRealtime: () => {} }).done).toMatch(/^closed/);
  const m = await cloudMeasurement(uuid);
  expect(m.body).toMatchObject({
    received_data_points: 40,
    completed: true,
    sequences: { expected_data_points: 40, status: "completed" },
  });
  expect(queue.completionsDue()).toEqual([]);
});

it("uploads measurements in the order they were taken", async () => {
  const older = crypto.randomUUID();
  const newer = crypto.randomUUID();
  queue.startMeasurement(older, 1_700_000_000_000_000_000n);
  queue.startMeasurement(newer, 1_700_000_001_000_000_000n);
  // The newer measurement's sequence is opened (and filled) first: the order is the measurements'.
  for (const uuid of [newer, older]) {
    const seq = queue.openSequence(uuid, "rt", crypto.randomUUID(), true);
    for (let i = 0; i < 3; i++) await queue.append(seq.ord, points(10)).durable;
    await queue.closeSequence(seq.ord);
    await queue.endMeasurement(uuid);
  }
  const acked: string[] = [];
  const ack = queue.ack.bind(queue);
  queue.ack = (ord, nos) => {
    acked.push(queue.getSequence(ord)!.measUuid);
    return ack(ord, nos);
  };
  expect(await upload("same_as_realtime", { busy: () => false, setHoldRealtime: () => {} }).done).toMatch(/^closed/);
  expect(acked.length).toBeGreaterThan(2);
  expect(acked).toEqual([...acked.filter((u) => u === older), ...acked.filter((u) => u === newer)]);
  expect(acked[0]).toBe(older);
});

it("reports its state with the bitrate of what it posts", async () => {
  const uuid = await pendingMeasurement(20);
  // lower_than_realtime: once the first batches went, real time gets busy and the upload waits, mid-way.
  let sent = 0;
  let busy = false;
  let pausedOnce = false;
  const opener = deferredUploaderOpener({
    queue,
    realtime: { busy: () => busy, setHoldRealtime: () => {} },
    batchBytes: 200,
  });
  const machine = deferredUploadMachine.provide({
    actors: {
      uploader: openerActor((p, cb) =>
        opener(p, {
          ...cb,
          data: (bytes) => {
            sent += bytes;
            if (!pausedOnce) busy = pausedOnce = true;
            cb.data(bytes);
          },
        }),
      ),
    },
  });
  const settings: DeferredUploadSettings = {
    priority: "lower_than_realtime",
    limit_data_storage: true,
    data_storage_capacity: 100,
  };
  const actor = createActor(machine, {
    input: { settings, session, pending: queue.getMeasurement(uuid)!.pendingDataSize },
  }).start();
  try {
    await expect.poll(() => sent, { timeout: 30_000 }).toBeGreaterThan(0);
    actor.send({ type: "TICK" });
    expect(reportDeferred(actor.getSnapshot())).toEqual({
      code: "connected",
      error: "",
      bitrate: Math.round((sent * 8 * 1000) / TICK_MS),
    });
    busy = false;
    await expect.poll(() => queue.getMeasurement(uuid)!.chunkCount, { timeout: 30_000 }).toBe(0);
    await expect.poll(() => reportDeferred(actor.getSnapshot()).code, { timeout: 30_000 }).toBe("none");
  } finally {
    actor.stop();
  }
});

it("tells the cloud that a measurement interrupted by a crash has ended, though real time had delivered all of it", async () => {
  const uuid = crypto.randomUUID();
  queue.startMeasurement(uuid, 1_700_000_000_000_000_000n);
  // Real time: the cloud has the measurement and every chunk (acked); then the agent is killed.
  const rest = new MeasurementRestClient(session);
  await rest.ensureMeasurement(uuid, "1700000000000000000");
  const seq = queue.openSequence(uuid, "rt", crypto.randomUUID(), true);
  for (let i = 0; i < 3; i++) await queue.append(seq.ord, points(10)).durable;
  const body = nextUploadBatch(queue, seq.ord, 0)!.body;
  await rest.storeChunks(body);
  await queue.ack(seq.ord, [1, 2, 3]);
  await queue.close();
  queue = await DurableQueue.open({ dir: path.join(dir, `queue-${n}`), capacityMiB: 100, limitDataStorage: true });
  expect(queue.getMeasurement(uuid)).toMatchObject({ ended: true, chunkCount: 0 });
  expect((await cloudMeasurement(uuid)).body.completed).toBe(false);

  expect(await upload("same_as_realtime", { busy: () => false, setHoldRealtime: () => {} }).done).toMatch(/^closed/);
  expect((await cloudMeasurement(uuid)).body).toMatchObject({
    received_data_points: 30,
    completed: true,
    sequences: { expected_data_points: 30 },
  });
  expect(queue.completionsDue()).toEqual([]);
});

it("drops a completion the cloud cannot take: a crashed measurement it never heard of", async () => {
  const uuid = crypto.randomUUID();
  queue.startMeasurement(uuid, 1_700_000_000_000_000_000n);
  await queue.close();
  queue = await DurableQueue.open({ dir: path.join(dir, `queue-${n}`), capacityMiB: 100, limitDataStorage: true });
  expect(queue.completionsDue().map((m) => m.uuid)).toEqual([uuid]);
  expect(await upload("same_as_realtime", { busy: () => false, setHoldRealtime: () => {} }).done).toMatch(/^closed/);
  expect(queue.completionsDue()).toEqual([]);
  expect((await cloudMeasurement(uuid)).status).toBe(404);
});
