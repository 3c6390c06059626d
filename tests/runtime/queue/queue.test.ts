// The durable LMDB queue: append, read, ack, reopen, eviction, deletion and what it does around commits and close
// (the chunk bytes: chunk-codec.test.ts).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { chunkPoints, decodeChunk } from "../../../runtime/queue/chunk-codec.js";
import { DurableQueue } from "../../../runtime/queue/store.js";
import { exited, plain, spawnTs, tempDir, waitFor } from "../../support/datapath.js";
import { grouped, pts } from "./helpers.js";

const M1 = "11111111-1111-4111-8111-111111111111";
const M2 = "22222222-2222-4222-8222-222222222222";
let dir: string;
let cleanup: () => Promise<void>;
const queues: DurableQueue[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  for (const q of queues.splice(0)) await q.close().catch(() => {});
  await cleanup();
});

async function openQueue(
  capacityMiB = 1024,
  limitDataStorage = true,
  onEvict?: (c: number, b: number) => void,
): Promise<DurableQueue> {
  const q = await DurableQueue.open({ dir, capacityMiB, limitDataStorage, onEvict });
  queues.push(q);
  return q;
}

describe("durable queue", () => {
  it("appends, reads in order, acks and keeps measurement bookkeeping", async () => {
    const q = await openQueue();
    const m = q.startMeasurement(M1, 123n);
    expect(q.startMeasurement(M1, 456n)).toBe(m);
    const s = q.openSequence(M1, "up", "seq-uuid", true);
    const a = q.append(s.ord, pts(10));
    const b = q.append(s.ord, pts(20));
    expect([a.chunkNo, b.chunkNo]).toEqual([1, 2]);
    await Promise.all([a.durable, b.durable]);
    const info = q.getMeasurement(M1)!;
    expect(info.chunkCount).toBe(2);
    expect(info.pendingDataSize).toBeGreaterThan(30 * 30);
    const chunks = q.readChunks(s.ord, 0, 10);
    expect(chunks.map((c) => c.chunkNo)).toEqual([1, 2]);
    expect(chunkPoints(decodeChunk(chunks[1]!.data)).map(plain)).toEqual(
      grouped(pts(20)).map((p) => ({ ...plain(p), srcId: "" })),
    );
    expect(q.readChunks(s.ord, 1, 10).map((c) => c.chunkNo)).toEqual([2]);
    await q.ack(s.ord, [1, 1, 99]);
    expect(q.getMeasurement(M1)).toMatchObject({ chunkCount: 1 });
    expect(q.readChunks(s.ord, 0, 10).map((c) => c.chunkNo)).toEqual([2]);
    expect(q.getSequence(s.ord)).toMatchObject({ lastChunkNo: 2, points: 30 });
  });

  it("keeps committed chunks across a reopen; open sequences become deferred-upload work, open measurements end", async () => {
    let q = await openQueue();
    q.startMeasurement(M1, 1_700_000_000_123_456_789n);
    const s = q.openSequence(M1, "up", "seq-1", true);
    const unrecovered = q.openSequence(M1, "up-2", "seq-x", false);
    await q.append(unrecovered.ord, pts(4)).durable;
    await q.append(s.ord, pts(7)).durable;
    await q.append(s.ord, pts(3)).durable;
    await q.ack(s.ord, [1]);
    await q.close();
    queues.length = 0;
    q = await openQueue();
    // The interrupted measurement is over: a restart starts a new one.
    expect(q.listMeasurements()).toMatchObject([
      { uuid: M1, baseTimeNs: "1700000000123456789", chunkCount: 1, ended: true },
    ]);
    // recover: true keeps its unacked chunks for deferred upload; recover: false drops (and counts) them.
    expect(q.pendingSequences()).toMatchObject([
      { uuid: "seq-1", destId: "up", closed: true, lastChunkNo: 2, points: 10 },
    ]);
    expect(q.stats.droppedChunks).toBe(1);
    expect(chunkPoints(decodeChunk(q.readChunks(s.ord, 0, 10)[0]!.data)).length).toBe(3);
    // Numbering goes on after the reopen: a new sequence gets a new ord.
    expect(q.openSequence(M1, "up", "seq-2", true).ord).toBeGreaterThan(s.ord);
  });

  it("loses no durable chunk when the writing process is killed with SIGKILL", async () => {
    const child = spawnTs("tests/runtime/queue/fixtures/queue-writer.ts", [dir], "pipe");
    const durable = new Set<number>();
    let rest = "";
    child.stdout!.on("data", (d: Buffer) => {
      const lines = (rest + d.toString()).split("\n");
      rest = lines.pop()!;
      for (const l of lines) durable.add(Number(l));
    });
    await waitFor(() => durable.size >= 300, 30_000, "300 durable chunks");
    child.kill("SIGKILL");
    await exited(child);
    const q = await openQueue();
    const [seq] = q.pendingSequences();
    const stored = new Set(q.readChunks(seq!.ord, 0, 1e9).map((c) => c.chunkNo));
    for (const no of durable) expect(stored.has(no)).toBe(true);
    const max = Math.max(...stored);
    expect(stored.size).toBe(max); // no holes: chunks 1..max
    expect(q.getMeasurement(seq!.measUuid)!.chunkCount).toBe(stored.size);
    for (const c of q.readChunks(seq!.ord, max - 1, 1)) expect(decodeChunk(c.data).count).toBe(100);
  });

  it("evicts the oldest chunks first above capacity and counts them", async () => {
    const evictions: number[] = [];
    const q = await openQueue(0.05, true, (c) => evictions.push(c)); // 52,428 bytes
    q.startMeasurement(M1, 0n);
    q.startMeasurement(M2, 0n);
    const a = q.openSequence(M1, "up", "a", true);
    const b = q.openSequence(M2, "up", "b", true);
    // Interleaved sequences: age, not sequence, decides. Each chunk is about 5 KiB.
    for (let i = 0; i < 20; i++) {
      await q.append(i % 2 ? b.ord : a.ord, pts(10, "x", 500)).durable;
    }
    const stats = q.stats;
    expect(stats.bytes).toBeLessThanOrEqual(0.05 * 1024 * 1024);
    expect(stats.evictedChunks).toBeGreaterThan(0);
    expect(evictions.reduce((x, y) => x + y, 0)).toBe(stats.evictedChunks);
    const left = [
      ...q.readChunks(a.ord, 0, 100).map((c) => (c.chunkNo - 1) * 2),
      ...q.readChunks(b.ord, 0, 100).map((c) => (c.chunkNo - 1) * 2 + 1),
    ].sort((x, y) => x - y);
    // What remains is exactly the newest appends.
    expect(left).toEqual(Array.from({ length: left.length }, (_, i) => 20 - left.length + i));
    expect(stats.chunks).toBe(left.length);
    expect(q.getMeasurement(M1)!.chunkCount + q.getMeasurement(M2)!.chunkCount).toBe(left.length);
  });

  it("never evicts when limit_data_storage is false, and reports disk usage", async () => {
    const q = await openQueue(0.01, false);
    q.startMeasurement(M1, 0n);
    const s = q.openSequence(M1, "up", "a", true);
    for (let i = 0; i < 5; i++) await q.append(s.ord, pts(10, "x", 500)).durable;
    expect(q.stats).toMatchObject({ chunks: 5, evictedChunks: 0 });
    expect(typeof (await q.diskFull())).toBe("boolean");
    const usage = await q.diskUsage();
    expect(usage).toBeGreaterThan(0);
    expect(usage).toBeLessThanOrEqual(1);
    q.setCapacity(0.01, true);
    await new Promise((r) => setTimeout(r, 50));
    expect(q.stats.chunks).toBeLessThan(5);
  });

  it("drops and counts what a recover: false sequence leaves unacked when it closes", async () => {
    const q = await openQueue();
    q.startMeasurement(M1, 0n);
    const s = q.openSequence(M1, "up", "a", false);
    for (let i = 0; i < 3; i++) await q.append(s.ord, pts(2)).durable;
    await q.ack(s.ord, [2]);
    await q.closeSequence(s.ord);
    expect(q.stats).toMatchObject({ droppedChunks: 2, chunks: 0 });
    expect(q.pendingSequences()).toEqual([]);
    expect(() => q.append(s.ord, pts(1))).toThrow(/not open/);
  });

  it("deletes a measurement's pending data", async () => {
    const q = await openQueue();
    q.startMeasurement(M1, 0n);
    q.startMeasurement(M2, 0n);
    const a = q.openSequence(M1, "up", "a", true);
    const b = q.openSequence(M2, "up", "b", true);
    await q.append(a.ord, pts(5)).durable;
    await q.append(b.ord, pts(5)).durable;
    expect(await q.deleteMeasurement(M1)).toBe(true);
    expect(await q.deleteMeasurement(M1)).toBe(false);
    expect(q.listMeasurements().map((m) => m.uuid)).toEqual([M2]);
    expect(q.readChunks(a.ord, 0, 10)).toEqual([]);
    expect(q.stats.chunks).toBe(1);
    await q.close();
    queues.length = 0;
    const again = await openQueue();
    expect(again.listMeasurements().map((m) => m.uuid)).toEqual([M2]);
    expect(again.stats.chunks).toBe(1);
  });

  it("drops writes that arrive after close (late acks, a sender winding down) and keeps what was committed", async () => {
    let q = await openQueue();
    q.startMeasurement(M1, 0n);
    const s = q.openSequence(M1, "up", "a", true);
    await q.append(s.ord, pts(5)).durable;
    await q.append(s.ord, pts(5)).durable;
    const before = q.ack(s.ord, [1]); // issued before close: close waits for it
    const closed = q.close();
    // Issued after close: dropped, never an lmdb write on a closed environment.
    await Promise.all([
      before,
      closed,
      q.ack(s.ord, [2]),
      q.closeSequence(s.ord),
      q.endMeasurement(M1),
      q.markOwesCompletion(M1, true),
    ]);
    expect(() => q.append(s.ord, pts(1))).toThrow("the queue is closed");
    expect(q.readChunks(s.ord, 0, 10)).toEqual([]);
    queues.length = 0;
    q = await openQueue();
    expect(q.pendingSequences()).toMatchObject([{ uuid: "a", closed: true, lastChunkNo: 2 }]);
    expect(q.readChunks(s.ord, 0, 10).map((c) => c.chunkNo)).toEqual([2]);
  });

  it("hands out a chunk while its commit runs, and an ack that overtakes the commit still releases it", async () => {
    let q = await openQueue();
    q.startMeasurement(M1, 0n);
    const s = q.openSequence(M1, "up", "a", true);
    await q.append(s.ord, pts(3)).durable;
    const b = q.append(s.ord, pts(4));
    const c = q.append(s.ord, pts(5));
    // Chunk 1 from LMDB, chunks 2 and 3 before their commit, in order, each once.
    expect(q.readChunks(s.ord, 0, 10).map((x) => [x.chunkNo, decodeChunk(x.data).count])).toEqual([
      [1, 3],
      [2, 4],
      [3, 5],
    ]);
    expect(q.readChunks(s.ord, 2, 10).map((x) => x.chunkNo)).toEqual([3]);
    expect(q.readChunks(s.ord, 0, 2).map((x) => x.chunkNo)).toEqual([1, 2]);
    const acked = q.ack(s.ord, [2]); // the server's ack came back before chunk 2 was on disk
    await Promise.all([b.durable, c.durable, acked]);
    expect(q.readChunks(s.ord, 0, 10).map((x) => x.chunkNo)).toEqual([1, 3]);
    expect(q.getSequence(s.ord)).toMatchObject({ chunkCount: 2 });
    await q.close();
    queues.length = 0;
    q = await openQueue();
    expect(q.readChunks(s.ord, 0, 10).map((x) => x.chunkNo)).toEqual([1, 3]);
  });

  it("reads one chunk at a time without a copy for the real-time sender, valid until the next read", async () => {
    const q = await openQueue();
    q.startMeasurement(M1, 0n);
    const s = q.openSequence(M1, "up", "a", true);
    await q.append(s.ord, pts(3, "x")).durable;
    await q.append(s.ord, pts(4, "y")).durable;
    const [first] = q.readChunks(s.ord, 0, 1, true);
    expect(chunkPoints(decodeChunk(first!.data)).map((p) => p.name)).toEqual(grouped(pts(3, "x")).map((p) => p.name));
    const [second] = q.readChunks(s.ord, 1, 1, true);
    expect([first!.chunkNo, second!.chunkNo]).toEqual([1, 2]);
    expect(decodeChunk(second!.data).count).toBe(4);
    // Several at once are always copies.
    const both = q.readChunks(s.ord, 0, 2, true);
    expect(both.map((c) => decodeChunk(c.data).count)).toEqual([3, 4]);
  });

  it("answers real time from memory while it keeps up: the chunk just appended, then nothing after the last", async () => {
    const q = await openQueue();
    q.startMeasurement(M1, 0n);
    const s = q.openSequence(M1, "up", "a", true);
    await q.append(s.ord, pts(2, "x")).durable;
    const env = (q as unknown as { env: { committed: (...a: unknown[]) => unknown } }).env;
    const committed = env.committed.bind(env);
    let lmdbReads = 0;
    env.committed = (...a: unknown[]) => (lmdbReads++, committed(...a));
    const b = q.append(s.ord, pts(3, "y"));
    const [next] = q.readChunks(s.ord, 1, 1, true);
    expect([next!.chunkNo, decodeChunk(next!.data).count]).toEqual([2, 3]);
    expect(q.readChunks(s.ord, 2, 1, true)).toEqual([]);
    expect(lmdbReads).toBe(0);
    // Behind (chunk 1 is only in LMDB): read from LMDB, then on into the chunk not yet committed.
    const c = q.append(s.ord, pts(4, "z"));
    expect(q.readChunks(s.ord, 0, 10).map((x) => [x.chunkNo, decodeChunk(x.data).count])).toEqual([
      [1, 2],
      [2, 3],
      [3, 4],
    ]);
    expect(lmdbReads).toBe(1);
    await Promise.all([b.durable, c.durable]);
    expect(q.readChunks(s.ord, 1, 10).map((x) => x.chunkNo)).toEqual([2, 3]);
  });

  it("keeps a chunk read before its commit intact after the commit, when its buffer is reused for the next chunk", async () => {
    const q = await openQueue();
    q.startMeasurement(M1, 0n);
    const s = q.openSequence(M1, "up", "a", true);
    // Chunks over 64 KiB come from a pool, and go back to it once committed.
    const first = q.append(s.ord, pts(2, "x", 48 * 1024));
    const [read] = q.readChunks(s.ord, 0, 10);
    await first.durable;
    await q.append(
      s.ord,
      pts(2, "y", 48 * 1024).map((p) => ({ ...p, payload: Buffer.alloc(p.payload.length, 0xee) })),
    ).durable;
    expect(
      chunkPoints(decodeChunk(read!.data)).map((p) => [
        p.name,
        Buffer.compare(p.payload, grouped(pts(2, "x", 48 * 1024)).find((x) => x.name === p.name)!.payload),
      ]),
    ).toEqual([
      ["x/0", 0],
      ["x/1", 0],
    ]);
  });

  it("a recover: false sequence closed before its last commit releases that chunk too", async () => {
    const q = await openQueue();
    q.startMeasurement(M1, 0n);
    const s = q.openSequence(M1, "up", "a", false);
    const a = q.append(s.ord, pts(2));
    await q.closeSequence(s.ord);
    await a.durable;
    expect(q.readChunks(s.ord, 0, 10)).toEqual([]);
    expect(q.stats).toMatchObject({ chunks: 0, droppedChunks: 1 });
  });
});
