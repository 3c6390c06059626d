// The store budget: chunks waiting for their commit are bounded in bytes across connections, each connection
// gets its share, so a connection that floods does not put a long backlog in front of another's chunks.
import { afterEach, expect, it } from "vitest";
import { startTestBroker, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { connected, type Raw } from "../../support/iscp-raw-peer.js";
import { ackedChunks, persistedUpstream } from "./helpers.js";

const NODE_B = "22222222-2222-4222-8222-222222222222";
let b: TestBroker | undefined;
const peers: Raw[] = [];
let pump: NodeJS.Timeout | undefined;
afterEach(async () => {
  clearInterval(pump);
  for (const r of peers.splice(0)) r.ws.terminate();
  await b?.close();
});

const acked = (r: Raw) => ackedChunks(r).length;

it("keeps the chunks waiting for storage within the byte budget, shared between connections", async () => {
  // A chunk of 1 KiB costs about 2 KiB (its bytes plus 1 KiB): the budget is about 16 chunks.
  const BUDGET = 32 * 1024;
  const queue: Array<{ node: string; go: () => void }> = [];
  let maxWaiting = 0;
  const aheadOfB: number[] = [];
  b = await startTestBroker({
    limits: { maxPendingStoreBytes: BUDGET, minPendingStoreBytesPerConn: 2048, pendingStoreChunkBytes: 1024 },
    onUpstreamChunk: (info) =>
      new Promise<void>((go) => {
        if (info.nodeId === NODE_B) aheadOfB.push(queue.filter((e) => e.node !== NODE_B).length);
        queue.push({ node: info.nodeId, go });
        maxWaiting = Math.max(maxWaiting, queue.length);
      }),
  });
  // The store commits the oldest four chunks every 5 ms, in arrival order.
  pump = setInterval(() => {
    for (const e of queue.splice(0, 4)) e.go();
  }, 5);
  const a = await connected(b);
  peers.push(a);
  const sendA = await persistedUpstream(a);
  sendA(1, 1000);
  await waitFor(() => acked(a) >= 50, 30_000, "A's first acks");
  const bPeer = await connected(b, { nodeId: NODE_B });
  peers.push(bPeer);
  const sendB = await persistedUpstream(bPeer);
  sendB(1, 20);
  await waitFor(() => acked(bPeer) === 20, 30_000, "B's acks");
  await waitFor(() => acked(a) === 1000, 30_000, "A's acks");
  // Within the budget: A's share while alone, then B's half share, each plus the chunk that crossed it (A's share
  // shrinks to half only as its chunks commit). A count of chunks per connection let each have 256 waiting.
  expect(maxWaiting).toBeLessThanOrEqual((BUDGET * 1.5) / 2000 + 2);
  // B's chunks waited behind at most the budget's worth of A's, not behind A's whole flood.
  expect(Math.max(...aheadOfB)).toBeLessThanOrEqual(BUDGET / 2000 + 2);
}, 120_000);
