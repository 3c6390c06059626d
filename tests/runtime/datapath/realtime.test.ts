// The data path with a fake iSCP stream: a deferred upload with priority higher_than_realtime holds real
// time back, also for upstream destinations made while it holds (a new measurement, changed settings); a
// measurement that ends while its stream is gone owes the cloud its end; persist: false keeps at most
// send_queue_size chunks unacknowledged; a stored chunk that cannot be read is skipped, with a warning; real
// time stops sending while the transport holds 16 MiB not yet written to the socket; a chunk the cloud could not
// store (PROCESS_FAILED) is sent again after a pause.
import { join } from "node:path";
import type { Logger } from "pino";
import { afterEach, beforeEach, expect, it } from "vitest";
import { DataPath } from "../../../runtime/datapath/datapath.js";
import type { StreamLink } from "../../../runtime/datapath/upstream-destination.js";
import { VolatileUpstream } from "../../../runtime/datapath/volatile-upstream.js";
import type { DataPoint } from "../../../runtime/datapoint.js";
import type { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { DurableQueue } from "../../../runtime/queue/store.js";
import {
  defaultConnection,
  defaultDeferredUpload,
  defaultTransport,
  type UpstreamSettings,
} from "../../../runtime/settings/schemas.js";
import type { AllSettings } from "../../../runtime/settings/store.js";
import { tempDir, waitFor } from "../../support/datapath.js";

let dir: string;
let cleanup: () => Promise<void>;
let queue: DurableQueue | undefined;
let dp: DataPath | undefined;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await dp?.close();
  await queue?.close();
  await cleanup();
});

const up0: UpstreamSettings = {
  id: "up",
  enabled: true,
  persist: true,
  recover: true,
  qos: "partial",
  flush_policy: "immediately",
  flush_interval: 5,
};
const up = up0;
const settings = (upstreams: UpstreamSettings[]): AllSettings => ({
  connection: defaultConnection(),
  transport: defaultTransport(),
  deferred_upload: defaultDeferredUpload(),
  upstreams,
  downstreams: [],
  upstream_ipcs: [],
  downstream_ipcs: [],
  upstream_filters: [],
  downstream_filters: [],
});
const points = (n: number): DataPoint[] =>
  Array.from({ length: n }, (_, i) => ({
    name: "n",
    type: "bytes",
    payload: Buffer.from([i]),
    elapsedNs: i,
    srcId: "dc",
  }));

/** A stream link whose upstreams record the chunks written to them (never acked). */
function fakeLink(
  written: number[],
  o: { ack?: boolean; closed?: string[]; code?: (no: number) => number } = {},
): StreamLink {
  let n = 0;
  const client = {
    onStateChange() {},
    async sendBaseTime() {},
    async openUpstream() {
      const streamId = `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
      let onAck: (r: { sequenceNumber: number; resultCode: number }[]) => void = () => {};
      const write = (no: number) => {
        written.push(no);
        if (o.ack) queueMicrotask(() => onAck([{ sequenceNumber: no, resultCode: o.code?.(no) ?? 0 }]));
      };
      return {
        streamId,
        onAck: (h: typeof onAck) => (onAck = h),
        onLost() {},
        onError() {},
        writeStoredChunk: (no: number) => write(no),
        async close() {
          o.closed?.push(streamId);
        },
      };
    },
  };
  return { client: client as unknown as IscpClient, data() {} };
}

it("a destination made while real time is held stays held until released", async () => {
  queue = await DurableQueue.open({ dir: join(dir, "q"), capacityMiB: 16, limitDataStorage: true });
  dp = new DataPath({ queue, settings: settings([up]) });
  const written: number[] = [];
  await dp.upstreamLinked(up, fakeLink(written));

  // Held before the measurement (and its destination) exists.
  dp.setHoldRealtime(true);
  await dp.sink(points(5), ["up"]);
  await dp.sink(points(5), ["up"]);
  await waitFor(() => dp!.realtimeBusy());
  await new Promise((r) => setTimeout(r, 200));
  expect(written).toEqual([]);

  // Changed settings make a new destination: still held.
  dp.apply(settings([{ ...up, flush_policy: "interval" }]));
  await dp.sink(points(5), ["up"]);
  await new Promise((r) => setTimeout(r, 200));
  expect(written).toEqual([]);

  dp.setHoldRealtime(false);
  await waitFor(() => written.length > 0);
});

it("a measurement that ends while its stream is gone owes the cloud its end; one closed in the cloud does not", async () => {
  queue = await DurableQueue.open({ dir: join(dir, "q"), capacityMiB: 16, limitDataStorage: true });
  dp = new DataPath({ queue, settings: settings([up]) });
  for (const lostAtEnd of [false, true]) {
    const written: number[] = [];
    const closed: string[] = [];
    const link = fakeLink(written, { ack: true, closed });
    await dp.upstreamLinked(up, link);
    await dp.sink(points(5), ["up"]);
    const run = dp.current!;
    await waitFor(() => queue!.getMeasurement(run.uuid)?.chunkCount === 0 && written.length > 0);
    if (lostAtEnd) await dp.upstreamUnlinked(up.id, link);
    await dp.endRun();
    expect(closed.length).toBe(lostAtEnd ? 0 : 1);
    expect(queue.getMeasurement(run.uuid)).toMatchObject({ ended: true, chunkCount: 0 });
    expect(queue.getMeasurement(run.uuid)!.owesCompletion === true).toBe(lostAtEnd);
    expect(queue.completionsDue().map((m) => m.uuid)).toEqual(lostAtEnd ? [run.uuid] : []);
  }
});

it("persist: false drops (and counts) points beyond send_queue_size unacknowledged chunks instead of growing memory", async () => {
  let sent = 0;
  const up = {
    write() {},
    flush: () => ++sent,
    get unackedCount() {
      return sent; // a stalled link: nothing is ever acknowledged
    },
    onAck() {},
    async close() {},
  };
  const client = { onStateChange() {}, async sendBaseTime() {}, openUpstream: async () => up };
  const v = new VolatileUpstream({ uuid: "m", baseTimeNs: 0n }, { ...up0, persist: false, recover: false }, () => 3);
  await v.attach({ client: client as unknown as IscpClient, data() {} });
  for (let i = 0; i < 10; i++) v.push(points(5));
  expect(sent).toBe(3);
  expect(v.counters).toEqual({ sentChunks: 3, droppedPoints: 35 });
});

it("skips a stored chunk that cannot be read, with a warning, and goes on with the chunks after it", async () => {
  queue = await DurableQueue.open({ dir: join(dir, "q"), capacityMiB: 16, limitDataStorage: true });
  const warnings: Array<Record<string, unknown>> = [];
  const log = { warn: (o: object, msg: string) => warnings.push({ ...o, msg }), info() {}, debug() {}, error() {} };
  dp = new DataPath({ queue, settings: settings([up]), log: log as unknown as Logger });
  const written: number[] = [];
  await dp.upstreamLinked(up, fakeLink(written, { ack: true }));
  await dp.sink(points(5), ["up"]);
  const run = dp.current!;
  await waitFor(() => written.length === 1);
  const seq = queue.sequencesOf(run.uuid).find((s) => s.realtime)!;
  await queue.appendEncoded(seq.ord, Buffer.alloc(28, 0xff), 10).durable; // damaged bytes, as a disk fault leaves them
  await dp.sink(points(5), ["up"]);
  await waitFor(() => written.length === 2);
  expect(written).toEqual([1, 3]);
  expect(warnings).toContainEqual(
    expect.objectContaining({ upstream: "up", chunk: 2, msg: "stored chunk could not be read" }),
  );
  // Still stored, for the deferred upload to drop and report once the sequence closes; the rest is released.
  await waitFor(() => queue!.getMeasurement(run.uuid)?.chunkCount === 1);
});

it("stops sending while the transport holds 16 MiB not yet written to the socket, and goes on at the next ack", async () => {
  queue = await DurableQueue.open({ dir: join(dir, "q"), capacityMiB: 16, limitDataStorage: true });
  dp = new DataPath({ queue, settings: settings([up]) });
  const written: number[] = [];
  let unsent = 0;
  let ack: (r: { sequenceNumber: number; resultCode: number }[]) => void = () => {};
  const client = {
    onStateChange() {},
    async sendBaseTime() {},
    transport: { bufferedBytes: () => unsent },
    async openUpstream() {
      return {
        streamId: "00000000-0000-4000-8000-000000000001",
        onAck: (h: typeof ack) => (ack = h),
        onLost() {},
        onError() {},
        writeStoredChunk: (no: number) => written.push(no),
        async close() {},
      };
    },
  };
  await dp.upstreamLinked(up, { client: client as unknown as IscpClient, data() {} });
  await dp.sink(points(5), ["up"]);
  await waitFor(() => written.length === 1);
  unsent = 16 * 1024 * 1024; // a slow link: the socket takes less than the agent sends
  await dp.sink(points(5), ["up"]);
  await dp.sink(points(5), ["up"]);
  await new Promise((r) => setTimeout(r, 100));
  expect(written).toEqual([1]);
  unsent = 0;
  ack([{ sequenceNumber: 1, resultCode: 0 }]);
  await waitFor(() => written.length === 3);
  expect(written).toEqual([1, 2, 3]);
});

it("sends a chunk the cloud could not store (PROCESS_FAILED) again after a pause, until it is stored", async () => {
  queue = await DurableQueue.open({ dir: join(dir, "q"), capacityMiB: 16, limitDataStorage: true });
  dp = new DataPath({ queue, settings: settings([up]) });
  const written: number[] = [];
  let failures = 3; // the cloud's database is away for the first three attempts
  await dp.upstreamLinked(up, fakeLink(written, { ack: true, code: () => (failures-- > 0 ? 77 : 0) }));
  await dp.sink(points(5), ["up"]);
  const run = dp.current!;
  await waitFor(() => written.length === 4, 30_000);
  expect(written).toEqual([1, 1, 1, 1]);
  // Stored at the fourth attempt: released from the queue, nothing left for the deferred upload.
  await waitFor(() => queue!.getMeasurement(run.uuid)?.chunkCount === 0);
  expect(dp.realtimeBusy()).toBe(false);
});
