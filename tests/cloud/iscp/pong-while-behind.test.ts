// A connection the cloud is behind on (its chunks wait for a slow store) still gets its Pongs in time, and is not
// dropped for a Pong of its own that waits behind its chunks: a client waits about a second for a Pong.
import { afterEach, expect, it } from "vitest";
import { decodeMessage } from "../../../proto/wire/message.js";
import type { IscpLimits } from "../../../cloud/iscp/broker/options.js";
import { startTestBroker, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { connected, type Raw } from "../../support/iscp-raw-peer.js";
import { ackedChunks, persistedUpstream } from "./helpers.js";

let b: TestBroker | undefined;
let r: Raw | undefined;
afterEach(async () => {
  r?.ws.terminate();
  await b?.close();
});

/** A broker whose store holds every chunk until `release()`, and a raw client with one persisted upstream. */
async function behind(limits: Partial<IscpLimits>, pingIntervalSec = 10) {
  const stored = new Set<number>();
  const waiting: (() => void)[] = [];
  let open = false;
  b = await startTestBroker({
    limits,
    onUpstreamChunk: async (_info, chunk) => {
      if (!open) await new Promise<void>((res) => waiting.push(res));
      stored.add(chunk.sequenceNumber);
    },
  });
  r = await connected(b, { pingInterval: pingIntervalSec, pingTimeout: 1 });
  const send = await persistedUpstream(r);
  const release = () => {
    open = true;
    for (const w of waiting.splice(0)) w();
  };
  const acked = () => new Set(ackedChunks(r!));
  return { stored, waiting, send, release, acked };
}

it("answers a Ping sent behind chunks that wait for storage while they still wait", async () => {
  const s = await behind({ maxPendingStoreBytes: 8 * 1024, minPendingStoreBytesPerConn: 1024 });
  s.send(1, 200);
  await waitFor(() => s.waiting.length >= 4, 30_000, "the store to fill up");
  r!.send({ ping: { requestId: 100 } });
  // The chunks ahead are held until release(): a Pong behind them would never come.
  const pong = await r!.next("pong", 15_000);
  expect(pong.pong!.requestId).toBe(100);
  expect(s.stored.size).toBe(0); // the chunks ahead of the Ping still wait
  s.release();
  await waitFor(() => s.acked().size === 200, 30_000, "every chunk acked");
  expect(s.stored.size).toBe(200);
}, 120_000);

it("does not drop a client whose Pong waits in input the broker stopped reading", async () => {
  // Held messages past 8 KiB stop the reading: the client's Pongs wait behind its chunks in the socket.
  const s = await behind(
    { maxPendingStoreBytes: 8 * 1024, minPendingStoreBytesPerConn: 1024, maxHeldBytesPerConn: 8 * 1024 },
    1,
  );
  r!.ws.on("message", (d) => {
    const m = decodeMessage(d as Buffer, "proto");
    if (m.ping) r!.send({ pong: { requestId: m.ping.requestId ?? 0 } });
  });
  s.send(1, 2000);
  await waitFor(() => s.waiting.length >= 4, 30_000, "the store to fill up");
  // The broker pings every second and waits at least 3 s (serverPingTimeoutFloorSec) for the Pong.
  await new Promise((res) => setTimeout(res, 5000));
  expect(r!.msgs.filter((m) => m.disconnect)).toEqual([]);
  expect(r!.ws.readyState).toBe(r!.ws.OPEN);
  s.release();
  await waitFor(() => s.acked().size === 2000, 30_000, "every chunk acked");
  expect(r!.msgs.filter((m) => m.disconnect)).toEqual([]);
}, 120_000);
