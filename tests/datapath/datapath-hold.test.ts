// The data path with a fake iSCP stream: a deferred upload with priority higher_than_realtime holds real
// time back, also for upstream destinations made while it holds (a new measurement, changed settings).
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { DataPath } from "../../runtime/datapath/datapath.js";
import type { StreamLink } from "../../runtime/datapath/upstream-destination.js";
import type { DataPoint } from "../../runtime/datapoint.js";
import type { IscpClient } from "../../runtime/iscp/conn.js";
import { DurableQueue } from "../../runtime/queue/store.js";
import { defaultConnection, defaultDeferredUpload, defaultTransport, type UpstreamSettings } from "../../runtime/settings/schemas.js";
import type { AllSettings } from "../../runtime/settings/store.js";
import { tempDir, waitFor } from "./helpers.js";

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

const up: UpstreamSettings = { id: "up", enabled: true, persist: true, recover: true, qos: "partial", flush_policy: "immediately", flush_interval: 5 };
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
const points = (n: number): DataPoint[] => Array.from({ length: n }, (_, i) => ({ name: "n", type: "bytes", payload: Buffer.from([i]), elapsedNs: i, srcId: "dc" }));

/** A stream link whose upstreams record the chunks written to them (never acked). */
function fakeLink(written: number[]): StreamLink {
  let n = 0;
  const client = {
    onStateChange() {},
    async sendBaseTime() {},
    async openUpstream() {
      return { streamId: `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`, onAck() {}, onLost() {}, onError() {}, writeChunk: (no: number) => written.push(no), async close() {} };
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
