// Live data does not wait for storage: chunks the broker holds because storage is behind on their connection are
// relayed to downstreams when they are read, each once and in order, and are stored and acked in their turn. A
// connection lost before their turn leaves them unstored, and the copies the client sends again after a resume
// are stored (not acked as duplicates of what was only relayed), and not relayed a second time.
import { afterEach, expect, it } from "vitest";
import { QoS, ResultCode, type iscp2 } from "../../../proto/wire/message.js";
import { startTestBroker, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { ALL, connected, NODE_U, type Raw } from "../../support/iscp-raw-peer.js";
import { ackedChunks, sendChunks, SESSION } from "./helpers.js";

const VIEWER = "22222222-2222-4222-8222-222222222222";
let b: TestBroker | undefined;
const conns: Raw[] = [];
afterEach(async () => {
  for (const r of conns.splice(0)) r.ws.terminate();
  await b?.close();
});

/** A broker whose store holds every chunk until `release()` (about 4 of 1 KiB wait for it; the rest are held). */
async function storageBehind() {
  const stored = new Map<number, number>();
  const waiting: (() => void)[] = [];
  let open = false;
  b = await startTestBroker({
    limits: { maxPendingStoreBytes: 8 * 1024, minPendingStoreBytesPerConn: 1024 },
    onUpstreamChunk: async (_info, chunk) => {
      if (!open) await new Promise<void>((res) => waiting.push(res));
      stored.set(chunk.sequenceNumber, (stored.get(chunk.sequenceNumber) ?? 0) + 1);
    },
  });
  const release = () => {
    open = true;
    for (const w of waiting.splice(0)) w();
  };
  return { stored, waiting, release };
}

async function connect(nodeId: string): Promise<Raw> {
  const r = await connected(b!, { nodeId });
  conns.push(r);
  return r;
}

/** A downstream of NODE_U's data; returns the sequence numbers it received, in order. */
async function viewer(): Promise<() => number[]> {
  const r = await connect(VIEWER);
  r.send({
    downstreamOpenRequest: {
      requestId: 2,
      desiredStreamIdAlias: 1,
      downstreamFilters: [{ sourceNodeId: NODE_U, dataFilters: ALL }],
    },
  });
  expect((await r.next("downstreamOpenResponse")).downstreamOpenResponse!.resultCode ?? 0).toBe(0);
  return () => r.msgs.flatMap((m) => (m.downstreamChunk ? [m.downstreamChunk.streamChunk!.sequenceNumber!] : []));
}

async function openUpstream(r: Raw): Promise<iscp2.IUpstreamOpenResponse> {
  r.send({
    upstreamOpenRequest: {
      requestId: 2,
      sessionId: SESSION,
      qos: QoS.RELIABLE,
      ackInterval: 0,
      expiryInterval: 60,
      extensionFields: { persist: true },
    },
  });
  return (await r.next("upstreamOpenResponse")).upstreamOpenResponse!;
}

const numbers = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

it("relays chunks held while storage is behind when they are read, and stores and acks each once later", async () => {
  const s = await storageBehind();
  const seen = await viewer();
  const r = await connect(NODE_U);
  const alias = (await openUpstream(r)).assignedStreamIdAlias!;
  sendChunks(r, alias, 1, 200);
  // Without relaying ahead, only the few chunks the store budget admits would reach the viewer.
  await waitFor(() => seen().length >= 200, 10_000, "every chunk relayed");
  expect(s.stored.size).toBe(0);
  expect(ackedChunks(r)).toEqual([]);
  s.release();
  await waitFor(() => new Set(ackedChunks(r)).size === 200, 10_000, "every chunk acked");
  expect([...s.stored.keys()].sort((x, y) => x - y)).toEqual(numbers(1, 200));
  expect([...s.stored.values()].every((n) => n === 1)).toBe(true);
  expect(seen()).toEqual(numbers(1, 200));
}, 30_000);

it("stores the chunks relayed ahead of a connection lost before their turn once the client sends them again", async () => {
  const s = await storageBehind();
  const seen = await viewer();
  const r = await connect(NODE_U);
  const opened = await openUpstream(r);
  sendChunks(r, opened.assignedStreamIdAlias!, 1, 50);
  await waitFor(() => seen().length >= 50, 10_000, "every chunk relayed");
  r.ws.terminate();
  await r.closed;
  s.release(); // the few chunks already handed to storage are stored; the held ones are gone with the connection
  await waitFor(() => s.waiting.length === 0 && s.stored.size > 0, 5000, "the running stores");
  const again = await connect(NODE_U);
  again.send({ upstreamResumeRequest: { requestId: 4, streamId: opened.assignedStreamId! } });
  const resumed = (await again.next("upstreamResumeResponse")).upstreamResumeResponse!;
  expect(resumed.resultCode ?? 0).toBe(ResultCode.SUCCEEDED);
  sendChunks(again, resumed.assignedStreamIdAlias!, 1, 50);
  await waitFor(() => new Set(ackedChunks(again)).size === 50, 10_000, "every chunk acked after the resume");
  expect([...s.stored.keys()].sort((x, y) => x - y)).toEqual(numbers(1, 50));
  expect([...s.stored.values()].every((n) => n === 1)).toBe(true);
  expect(seen()).toEqual(numbers(1, 50)); // the copies sent again are not relayed again
}, 30_000);
