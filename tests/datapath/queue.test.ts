import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DataPoint } from "../../runtime/datapoint.js";
import { ChunkBuilder, chunkGroups, chunkPoints, decodeChunk, encodeChunk } from "../../runtime/queue/chunk-codec.js";
import { DurableQueue } from "../../runtime/queue/store.js";
import { exited, plain, point, spawnTs, tempDir, waitFor } from "./helpers.js";

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

async function openQueue(capacityMiB = 1024, limitDataStorage = true, onEvict?: (c: number, b: number) => void): Promise<DurableQueue> {
  const q = await DurableQueue.open({ dir, capacityMiB, limitDataStorage, onEvict });
  queues.push(q);
  return q;
}

const pts = (n: number, tag = "p", size = 16): DataPoint[] =>
  Array.from({ length: n }, (_, i) => point(`${tag}/${i % 3}`, i % 2 ? "bytes" : "float64", Buffer.alloc(size, i), i * 1000));

describe("chunk codec", () => {
  it("round-trips points, data ids listed once", () => {
    const input = [...pts(5), point("名/ü", "string", "", -5)];
    const buf = encodeChunk(input);
    const d = decodeChunk(buf);
    expect(d.count).toBe(6);
    expect(d.ids.length).toBe(6);
    expect(chunkPoints(d, "src").map(plain)).toEqual(input.map(plain));
    expect(encodeChunk(chunkPoints(d, "src")).equals(buf)).toBe(true);
    expect(buf.length).toBe(6 + d.ids.reduce((n, id) => n + 4 + Buffer.byteLength(id.name) + Buffer.byteLength(id.type), 0) + 5 * 30 + 14);
  });
});

describe("chunk builder", () => {
  it("grows for large payloads, handles many data ids and resets after finish", () => {
    const b = new ChunkBuilder();
    const input = [
      ...Array.from({ length: 1000 }, (_, i) => point(`id/${i}`, "int64", Buffer.alloc(8, i), i)),
      point("big", "jpeg", Buffer.alloc(300_000, 9), 1e12),
    ];
    for (const p of input) b.add(p);
    const buf = b.finish(16);
    expect(buf.subarray(16).equals(encodeChunk(input))).toBe(true);
    expect(chunkPoints(decodeChunk(buf.subarray(16))).map(plain)).toEqual(input.map((p) => ({ ...plain(p), srcId: "" })));
    expect(b.count).toBe(0);
    b.add(point("x", "t", "y", 1));
    expect(decodeChunk(b.finish()).ids).toEqual([{ name: "x", type: "t" }]);
  });
});

describe("chunk groups", () => {
  it("group points by data id in first-appearance order", () => {
    const d = decodeChunk(encodeChunk([point("a", "t", "1", 1), point("b", "t", "2", 2), point("a", "t", "3", 3), point("a", "u", "4", 4)]));
    expect(chunkGroups(d).map((g) => [g.dataId.type + ":" + g.dataId.name, g.points.map((p) => `${p.elapsedNs}=${p.payload.toString()}`)])).toEqual([
      ["t:a", ["1=1", "3=3"]],
      ["t:b", ["2=2"]],
      ["u:a", ["4=4"]],
    ]);
  });
});

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
    expect(chunkPoints(decodeChunk(chunks[1]!.data)).map(plain)).toEqual(pts(20).map((p) => ({ ...plain(p), srcId: "" })));
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
    expect(q.listMeasurements()).toMatchObject([{ uuid: M1, baseTimeNs: "1700000000123456789", chunkCount: 1, ended: true }]);
    // recover: true keeps its unacked chunks for deferred upload; recover: false drops (and counts) them.
    expect(q.pendingSequences()).toMatchObject([{ uuid: "seq-1", destId: "up", closed: true, lastChunkNo: 2, points: 10 }]);
    expect(q.stats.droppedChunks).toBe(1);
    expect(chunkPoints(decodeChunk(q.readChunks(s.ord, 0, 10)[0]!.data)).length).toBe(3);
    // Numbering goes on after the reopen: a new sequence gets a new ord.
    expect(q.openSequence(M1, "up", "seq-2", true).ord).toBeGreaterThan(s.ord);
  });

  it("loses no durable chunk when the writing process is killed with SIGKILL", async () => {
    const child = spawnTs("tests/datapath/fixtures/queue-writer.ts", [dir], "pipe");
    const durable = new Set<number>();
    let rest = "";
    child.stdout!.on("data", (d: Buffer) => {
      const lines = (rest + d.toString()).split("\n");
      rest = lines.pop()!;
      for (const l of lines) durable.add(Number(l));
    });
    await waitFor(() => durable.size >= 300, 20_000, "300 durable chunks");
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
    const left = [...q.readChunks(a.ord, 0, 100).map((c) => (c.chunkNo - 1) * 2), ...q.readChunks(b.ord, 0, 100).map((c) => (c.chunkNo - 1) * 2 + 1)].sort((x, y) => x - y);
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
    await Promise.all([before, closed, q.ack(s.ord, [2]), q.closeSequence(s.ord), q.endMeasurement(M1), q.markOwesCompletion(M1, true)]);
    expect(() => q.append(s.ord, pts(1))).toThrow("the queue is closed");
    expect(q.readChunks(s.ord, 0, 10)).toEqual([]);
    queues.length = 0;
    q = await openQueue();
    expect(q.pendingSequences()).toMatchObject([{ uuid: "a", closed: true, lastChunkNo: 2 }]);
    expect(q.readChunks(s.ord, 0, 10).map((c) => c.chunkNo)).toEqual([2]);
  });
});
