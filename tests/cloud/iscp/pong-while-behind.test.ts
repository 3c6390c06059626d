// A connection the cloud is behind on (its chunks wait for a slow store) still gets its Pongs in time, and is not
// dropped for a Pong of its own that waits behind its chunks: a client waits about a second for a Pong.
import { afterEach, expect, it } from "vitest";
import { decodeMessage, QoS, ResultCode } from "../../../proto/wire/message.js";
import type { IscpLimits } from "../../../cloud/iscp/broker/options.js";
import { startTestBroker, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { connected, type Raw } from "../../support/iscp-raw-peer.js";

let b: TestBroker | undefined;
let r: Raw | undefined;
afterEach(async () => {
  r?.ws.terminate();
  await b?.close();
});

const SESSION = "0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f";

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
  r.send({
    upstreamOpenRequest: {
      requestId: 2,
      sessionId: SESSION,
      qos: QoS.RELIABLE,
      ackInterval: 0,
      extensionFields: { persist: true },
    },
  });
  const alias = (await r.next("upstreamOpenResponse")).upstreamOpenResponse!.assignedStreamIdAlias!;
  const payload = new Uint8Array(1024);
  const send = (from: number, to: number) => {
    for (let seq = from; seq <= to; seq++) {
      r!.send({
        upstreamChunk: {
          streamIdAlias: alias,
          streamChunk: {
            sequenceNumber: seq,
            dataPointGroups: [{ dataId: { name: "n", type: "t" }, dataPoints: [{ elapsedTime: seq, payload }] }],
          },
        },
      });
    }
  };
  const release = () => {
    open = true;
    for (const w of waiting.splice(0)) w();
  };
  const acked = () =>
    new Set(
      r!.msgs
        .flatMap((m) => m.upstreamChunkAck?.results ?? [])
        .filter((x) => (x.resultCode ?? 0) === ResultCode.SUCCEEDED)
        .map((x) => x.sequenceNumber),
    );
  return { stored, waiting, send, release, acked };
}

it("answers a Ping sent behind chunks that wait for storage while they still wait", async () => {
  const s = await behind({ maxPendingStoreBytes: 8 * 1024, minPendingStoreBytesPerConn: 1024 });
  s.send(1, 200);
  await waitFor(() => s.waiting.length >= 4, 5000, "the store to fill up");
  r!.send({ ping: { requestId: 100 } });
  // The chunks ahead are held until release(): a Pong behind them would never come.
  const pong = await r!.next("pong", 15_000);
  expect(pong.pong!.requestId).toBe(100);
  expect(s.stored.size).toBe(0); // the chunks ahead of the Ping still wait
  s.release();
  await waitFor(() => s.acked().size === 200, 10_000, "every chunk acked");
  expect(s.stored.size).toBe(200);
}, 20_000);

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
  await waitFor(() => s.waiting.length >= 4, 5000, "the store to fill up");
  // The broker pings every second and waits at least 3 s (serverPingTimeoutFloorSec) for the Pong.
  await new Promise((res) => setTimeout(res, 5000));
  expect(r!.msgs.filter((m) => m.disconnect)).toEqual([]);
  expect(r!.ws.readyState).toBe(r!.ws.OPEN);
  s.release();
  await waitFor(() => s.acked().size === 2000, 15_000, "every chunk acked");
  expect(r!.msgs.filter((m) => m.disconnect)).toEqual([]);
}, 40_000);
