import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pb } from "../../../proto/gen/pb.js";
import { chunkGroups, decodeChunk } from "../../../runtime/queue/chunk-codec.js";
import { encodeChunkV1 } from "../../../runtime/queue/chunk-v1.js";
import { CHUNK_HEADER, DurableQueue } from "../../../runtime/queue/store.js";
import { nextUploadBatch } from "../../../runtime/deferred/store-data-chunks.js";
import { point, tempDir } from "../../support/datapath.js";

const M = "55555555-5555-4555-8555-555555555555";
const S = "66666666-6666-4666-8666-666666666666";
let dir: string;
let cleanup: () => Promise<void>;
let q: DurableQueue;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  q = await DurableQueue.open({ dir, capacityMiB: 64, limitDataStorage: true });
});
afterEach(async () => {
  await q.close();
  await cleanup();
});

describe("deferred upload batches", () => {
  it("encode stored chunks as StoreDataChunks, split by size, chunk number = sequence_number", async () => {
    q.startMeasurement(M, 0n);
    const seq = q.openSequence(M, "deferred", S, true).ord;
    for (let i = 0; i < 5; i++) {
      await q.append(seq, [
        point("1/a", "float64", Buffer.alloc(8, i), i * 1e9),
        point("1/b", "bytes", Buffer.alloc(400_000, i), i * 1e9 + 1),
        point("1/a", "float64", Buffer.alloc(8, i + 100), -5),
      ]).durable;
    }
    const first = nextUploadBatch(q, seq, 0, 1_000_000)!;
    expect(first.chunkNos).toEqual([1, 2]);
    expect(first.points).toBe(6);
    const msg = pb.StoreDataChunks.decode(first.body);
    expect(msg.measUuid).toBe(M);
    expect(msg.sequenceUuid).toBe(S);
    expect(msg.chunks.map((c) => c.sequenceNumber)).toEqual([1, 2]);
    const groups = msg.chunks[1]!.dataPointGroups!;
    expect(groups.map((g) => `${g.dataId!.type}:${g.dataId!.name}`)).toEqual(["float64:1/a", "bytes:1/b"]);
    expect(groups[0]!.dataPoints!.map((p) => Number(p.elapsedTime))).toEqual([1e9, -5]);
    expect(Buffer.from(groups[0]!.dataPoints![1]!.payload!)).toEqual(Buffer.alloc(8, 101));
    expect(groups[1]!.dataPoints![0]!.payload!.length).toBe(400_000);
    await q.ack(seq, first.chunkNos);
    const rest = [nextUploadBatch(q, seq, 0, 1_000_000)!, nextUploadBatch(q, seq, 4, 1_000_000)!];
    expect(rest.map((b) => b.chunkNos)).toEqual([[3, 4], [5]]);
    expect(nextUploadBatch(q, seq, 5)).toBeUndefined();
    // A single chunk larger than maxBytes still goes out alone.
    expect(nextUploadBatch(q, seq, 0, 10)!.chunkNos).toEqual([3]);
  });

  it("writes the bytes protobufjs writes for the same chunks (the stored entries re-tagged, not re-encoded)", async () => {
    q.startMeasurement(M, 0n);
    const seq = q.openSequence(M, "deferred", S, true).ord;
    const names = ["a", "名/ü", "", "x".repeat(200)];
    for (let c = 0; c < 4; c++)
      await q.append(
        seq,
        Array.from({ length: 50 + c * 30 }, (_, i) =>
          point(
            names[(i * 7 + c) % 4]!,
            i % 3 ? "float64" : "bytes",
            Buffer.alloc((i * 13) % 150, i),
            (i - 20) * 2 ** 28 + c,
          ),
        ),
      ).durable;
    // A chunk left by an older agent (the earlier layout) goes out the same way.
    const old = [point("old", "int", Buffer.from("v1"), 42)];
    const buf = Buffer.concat([Buffer.alloc(CHUNK_HEADER), encodeChunkV1(old)]);
    await q.appendEncoded(seq, buf, 1).durable;
    const batch = nextUploadBatch(q, seq, 0)!;
    expect(batch.chunkNos).toEqual([1, 2, 3, 4, 5]);
    const reference = pb.StoreDataChunks.encode({
      measUuid: M,
      sequenceUuid: S,
      chunks: q.readChunks(seq, 0, 10).map((c) => ({
        sequenceNumber: c.chunkNo,
        dataPointGroups: chunkGroups(decodeChunk(c.data)).map((g) => ({
          dataId: { name: g.dataId.name, type: g.dataId.type },
          dataPoints: g.points.map((p) => ({ elapsedTime: p.elapsedNs, payload: p.payload })),
        })),
      })),
    }).finish();
    expect(Buffer.from(batch.body).equals(Buffer.from(reference))).toBe(true);
    expect(batch.points).toBe(50 + 80 + 110 + 140 + 1);
    expect(batch.unreadable).toEqual([]);
  });

  it("leaves out stored chunks that cannot be read and names them, so the rest still goes", async () => {
    q.startMeasurement(M, 0n);
    const seq = q.openSequence(M, "deferred", S, true).ord;
    await q.append(seq, [point("a", "t", Buffer.from("one"), 1)]).durable;
    // A chunk whose bytes are damaged: the layout bit set, lengths that run past its end.
    const bad = Buffer.alloc(CHUNK_HEADER + 12, 0xff);
    await q.appendEncoded(seq, bad, 1).durable;
    await q.append(seq, [point("a", "t", Buffer.from("three"), 3)]).durable;
    const batch = nextUploadBatch(q, seq, 0)!;
    expect(batch.chunkNos).toEqual([1, 3]);
    expect(batch.unreadable).toEqual([2]);
    const msg = pb.StoreDataChunks.decode(batch.body);
    expect(msg.chunks.map((c) => Buffer.from(c.dataPointGroups![0]!.dataPoints![0]!.payload!).toString())).toEqual([
      "one",
      "three",
    ]);
    // Only damaged chunks left: an empty batch that still names them.
    await q.ack(seq, [1, 3]);
    expect(nextUploadBatch(q, seq, 0)).toMatchObject({ chunkNos: [], points: 0, unreadable: [2] });
    await q.ack(seq, [2]);
    expect(nextUploadBatch(q, seq, 0)).toBeUndefined();
  });
});
