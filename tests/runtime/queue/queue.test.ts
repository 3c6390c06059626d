import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DataPoint } from "../../../runtime/datapoint.js";
import {
  ChunkBuilder,
  chunkGroups,
  chunkPoints,
  chunkView,
  decodeChunk,
  encodeChunk,
} from "../../../runtime/queue/chunk-codec.js";
import { encodeChunkV1 } from "../../../runtime/queue/chunk-v1.js";
import { DurableQueue } from "../../../runtime/queue/store.js";
import { exited, plain, point, spawnTs, tempDir, waitFor } from "../../support/datapath.js";

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

const pts = (n: number, tag = "p", size = 16): DataPoint[] =>
  Array.from({ length: n }, (_, i) =>
    point(`${tag}/${i % 3}`, i % 2 ? "bytes" : "float64", Buffer.alloc(size, i), i * 1000),
  );

/** Points in the order a chunk keeps them: grouped by data id (first appearance), arrival order within a group. */
function grouped(points: readonly DataPoint[]): DataPoint[] {
  const order = new Map<string, DataPoint[]>();
  for (const p of points) {
    const k = `${p.type}\u0000${p.name}`;
    (order.get(k) ?? order.set(k, []).get(k)!).push(p);
  }
  return [...order.values()].flat();
}

describe("chunk codec", () => {
  it("round-trips points grouped by data id, each data id listed once", () => {
    const input = [...pts(5), point("名/ü", "string", "", -5)];
    const buf = encodeChunk(input);
    const d = decodeChunk(buf);
    expect(d.count).toBe(6);
    expect(d.ids.length).toBe(6);
    expect(chunkPoints(d, "src").map(plain)).toEqual(grouped(input).map(plain));
    expect(encodeChunk(chunkPoints(d, "src")).equals(buf)).toBe(true);
    // Per group 12 bytes and the id; per 16-byte point 1 + 1 + (1 + elapsed varint) + (1 + 1) + 16.
    const elapsed = (ns: number) => (ns === 0 ? 1 : Math.ceil(Math.log2(Math.abs(ns) * 2 + 1) / 7));
    const idBytes = d.ids.reduce((n, id) => n + 12 + Buffer.byteLength(id.name) + Buffer.byteLength(id.type), 0);
    expect(buf.length).toBe(
      6 + idBytes + pts(5).reduce((n, p) => n + 21 + elapsed(p.elapsedNs), 0) + 2 + 1 + elapsed(-5) + 2,
    );
  });

  it("keeps each data id's points as iSCP DataPoint entries (the spans a frame copies)", () => {
    const v = chunkView(encodeChunk([point("a", "t", "xy", 3), point("b", "u", "", -1), point("a", "t", "z", 300)]));
    expect(v.count).toBe(3);
    expect(
      v.groups.map((g) => [g.dataId.name, g.dataId.type, g.count, v.buffer.subarray(g.start, g.end).toString("hex")]),
    ).toEqual([
      ["a", "t", 2, "1a06" + "0806" + "12027879" + "1a06" + "08d804" + "12017a"],
      ["b", "u", 1, "1a04" + "0801" + "1200"],
    ]);
  });

  it("reads chunks an older agent stored (the earlier layout) the same way", () => {
    const input = [...pts(7), point("big", "jpeg", Buffer.alloc(70_000, 3), 2 ** 40)];
    const old = encodeChunkV1(input);
    expect(chunkPoints(decodeChunk(old)).map(plain)).toEqual(input.map((p) => ({ ...plain(p), srcId: "" })));
    expect(chunkView(old).buffer.equals(encodeChunk(input))).toBe(true);
  });

  it("refuses a corrupt chunk with an error instead of reading past it", () => {
    const buf = encodeChunk(pts(4));
    const cut = buf.subarray(0, buf.length - 3);
    expect(() => chunkView(cut)).toThrow(/length mismatch/);
    const bad = Buffer.from(buf);
    bad[chunkView(buf).groups[0]!.start] = 0x22;
    expect(() => decodeChunk(bad)).toThrow(/corrupt/);
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
    expect(chunkPoints(decodeChunk(buf.subarray(16))).map(plain)).toEqual(
      input.map((p) => ({ ...plain(p), srcId: "" })),
    );
    expect(b.count).toBe(0);
    b.add(point("x", "t", "y", 1));
    expect(decodeChunk(b.finish()).ids).toEqual([{ name: "x", type: "t" }]);
  });

  it("finishes one-data-id chunks in place without sharing bytes between chunks", () => {
    const b = new ChunkBuilder();
    const chunks = [1, 2, 3].map((k) => {
      for (let i = 0; i < 50 * k; i++) b.add(point("one", "bytes", Buffer.alloc(k * 100, k), i));
      return b.finish(16);
    });
    chunks.forEach((c, i) => {
      const d = decodeChunk(c.subarray(16));
      expect(d.count).toBe(50 * (i + 1));
      expect(
        chunkPoints(d).every((p) => p.payload.length === (i + 1) * 100 && p.payload.every((x) => x === i + 1)),
      ).toBe(true);
    });
  });
});

describe("chunk groups", () => {
  it("group points by data id in first-appearance order", () => {
    const d = decodeChunk(
      encodeChunk([point("a", "t", "1", 1), point("b", "t", "2", 2), point("a", "t", "3", 3), point("a", "u", "4", 4)]),
    );
    expect(
      chunkGroups(d).map((g) => [
        g.dataId.type + ":" + g.dataId.name,
        g.points.map((p) => `${p.elapsedNs}=${p.payload.toString()}`),
      ]),
    ).toEqual([
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
