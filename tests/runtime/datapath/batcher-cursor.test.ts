import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DataPoint } from "../../../runtime/datapoint.js";
import { ChunkBatcher } from "../../../runtime/datapath/chunk-batcher.js";
import { decodeChunk } from "../../../runtime/queue/chunk-codec.js";
import { SendCursor } from "../../../runtime/datapath/send-cursor.js";
import { DestinationRouter } from "../../../runtime/datapath/destination-router.js";
import { DurableQueue } from "../../../runtime/queue/store.js";
import { point, tempDir } from "../../support/datapath.js";

const M = "33333333-3333-4333-8333-333333333333";
let dir: string;
let cleanup: () => Promise<void>;
let q: DurableQueue;
let seq: number;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  q = await DurableQueue.open({ dir, capacityMiB: 64, limitDataStorage: true });
  q.startMeasurement(M, 0n);
  seq = q.openSequence(M, "up", "s", true).ord;
});
afterEach(async () => {
  await q.close();
  await cleanup();
});

const pts = (n: number, from = 0): DataPoint[] =>
  Array.from({ length: n }, (_, i) => point("a", "bytes", Buffer.alloc(16), from + i));
const chunkSizes = () => q.readChunks(seq, 0, 1000).map((c) => decodeChunk(c.data).count);

describe("chunk batcher", () => {
  it("interval: one chunk per flush interval, split at maxPoints, resolved when durable", async () => {
    const durable: number[] = [];
    const b = new ChunkBatcher(q, seq, {
      flushPolicy: "interval",
      flushIntervalMs: 30,
      maxPoints: 100,
      onDurable: (_s, no) => durable.push(no),
    });
    const first = b.push(pts(10));
    const second = b.push(pts(20, 10));
    expect(chunkSizes()).toEqual([]); // nothing appended before the interval
    await Promise.all([first, second]);
    expect(chunkSizes()).toEqual([30]);
    await b.push(pts(250, 30));
    expect(chunkSizes()).toEqual([30, 100, 100, 50]);
    expect(durable).toEqual([1, 2, 3, 4]);
    const all = q.readChunks(seq, 0, 10).flatMap((c) => [...decodeChunk(c.data).elapsedNs]);
    expect(all).toEqual(Array.from({ length: 280 }, (_, i) => i));
  });

  it("immediately: a chunk per push; switchSequence continues in a new sequence", async () => {
    const b = new ChunkBatcher(q, seq, { flushPolicy: "immediately", flushIntervalMs: 5 });
    await b.push(pts(1));
    await b.push(pts(3));
    expect(chunkSizes()).toEqual([1, 3]);
    const next = q.openSequence(M, "up", "s2", true).ord;
    await b.switchSequence(next);
    await b.push(pts(2));
    expect(q.readChunks(next, 0, 10).map((c) => decodeChunk(c.data).count)).toEqual([2]);
  });

  it("rejects the pushers when the sequence is closed", async () => {
    const b = new ChunkBatcher(q, seq, { flushPolicy: "immediately", flushIntervalMs: 5 });
    await q.closeSequence(seq);
    await expect(b.push(pts(1))).rejects.toThrow(/not open/);
  });
});

describe("send cursor", () => {
  it("hands out at most `window` unacked chunks; acked ones are released, given-up ones stay", async () => {
    for (let i = 0; i < 10; i++) await q.append(seq, pts(1, i)).durable;
    const c = new SendCursor(q, seq, 4);
    expect(c.take().map((x) => x.chunkNo)).toEqual([1, 2, 3, 4]);
    expect(c.take()).toEqual([]);
    await c.ack([1, 2]);
    expect(c.take().map((x) => x.chunkNo)).toEqual([5, 6]);
    c.giveUp([3, 4]);
    expect(c.take().map((x) => x.chunkNo)).toEqual([7, 8]);
    expect(c.inFlightCount).toBe(4);
    expect(q.readChunks(seq, 0, 100).map((x) => x.chunkNo)).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("hands requeued chunks (acks lost with a connection) out again first, in order, within the window", async () => {
    for (let i = 0; i < 10; i++) await q.append(seq, pts(1, i)).durable;
    const c = new SendCursor(q, seq, 3);
    expect(c.take().map((x) => x.chunkNo)).toEqual([1, 2, 3]);
    c.requeue([3, 1, 2]);
    expect(c.inFlightCount).toBe(3); // still owed
    expect(c.take(2).map((x) => x.chunkNo)).toEqual([1, 2]);
    await c.ack([1, 3]); // 3's late ack arrived on the resumed stream: not handed out again
    expect(c.take().map((x) => x.chunkNo)).toEqual([4, 5]);
    await c.ack([2, 4, 5]);
    expect(c.inFlightCount).toBe(0);
    expect(c.take().map((x) => x.chunkNo)).toEqual([6, 7, 8]);
  });
});

describe("destination router", () => {
  it("sends each batch to every dest id, accepted when all are durable; unknown ids are counted", async () => {
    const realtime = new ChunkBatcher(q, seq, { flushPolicy: "interval", flushIntervalMs: 5 });
    const deferredSeq = q.openSequence(M, "deferred", "d", true, false).ord;
    const deferred = new ChunkBatcher(q, deferredSeq, { flushPolicy: "interval", flushIntervalMs: 5 });
    const router = new DestinationRouter();
    router.set("up", realtime);
    router.set("deferred", deferred);
    await router.route(pts(10), ["up", "deferred", "gone"]);
    expect(chunkSizes()).toEqual([10]);
    expect(q.readChunks(deferredSeq, 0, 10).map((c) => decodeChunk(c.data).count)).toEqual([10]);
    expect(router.unrouted.get("gone")).toBe(10);
    // The deferred destination's sequence is upload work while still open; the real-time one is not.
    expect(q.pendingSequences().map((s) => s.destId)).toEqual(["deferred"]);
    router.set("up", undefined);
    expect(router.route(pts(1), ["up"])).toBeUndefined();
    expect(router.unrouted.get("up")).toBe(1);
  });
});
