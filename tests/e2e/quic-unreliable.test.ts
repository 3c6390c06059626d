// qos `unreliable` over QUIC: chunks travel as datagrams, some of which the network loses. A lost chunk
// frees its place in the send window (real time goes on) and, with recover: true, stays stored until
// the deferred upload delivers it once the measurement ends: every point reaches the cloud exactly once.
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { QuicDatagramChannel } from "../../proto/transport/quic/datagrams.js";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, startStack, streamThroughRt, until, type Stack } from "./stack.js";

let s: Stack;
const realSend = QuicDatagramChannel.prototype.send;
beforeAll(async () => {
  s = await startStack({ quic: true });
  await s.connect("quic");
  // A small send window: chunks that never get an ack would block real time if they held their place.
  await s.agentApi.patch("/transport", { send_queue_size: 4 });
  await streamThroughRt(s, { qos: "unreliable" });
}, 120_000);
afterEach(() => {
  QuicDatagramChannel.prototype.send = realSend;
});
afterAll(async () => s?.close());

const state = async () => (await s.agentApi.get<{ code: string }>("/upstreams/rt/state")).body;

it("loses datagrams in real time and still delivers every point once (deferred upload)", async () => {
  await until(async () => ["quiet", "connected"].includes((await state()).code), 30_000, "upstream open over QUIC");
  // The network loses every third datagram message the agent sends (it counts as sent).
  let n = 0;
  QuicDatagramChannel.prototype.send = function (message: Uint8Array) {
    if (++n % 3 === 0) return this.available;
    return realSend.call(this, message);
  };
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    for (let i = 0; i < 300; i += 10) {
      await writeNumbered(fh, i, i + 10, { size: 32 });
      await new Promise((r) => setTimeout(r, 20)); // several chunks, several datagrams
    }
    // About two thirds arrive in real time; a send window held by lost chunks would stop it near 4 chunks.
    await until(async () => (await cloudIndices(s)).length >= 160, 30_000, "points in real time past the losses");
  } finally {
    await fh.close();
  }
  expect(n).toBeGreaterThan(3); // the datagram path was used, and some were lost
  const inRealTime = (await cloudIndices(s)).length;
  expect(inRealTime).toBeLessThan(300);
  QuicDatagramChannel.prototype.send = realSend;
  // The connector is gone: the measurement ends 2 s later and the lost chunks go by deferred upload.
  await s.agentApi.patch("/device-connectors/upstream/dc", { enabled: false });
  const got = await until(
    async () => {
      const i = await cloudIndices(s);
      return i.length >= 300 && i;
    },
    60_000,
    "all 300 points",
  );
  expect(got).toEqual(range(0, 300));
}, 120_000);
