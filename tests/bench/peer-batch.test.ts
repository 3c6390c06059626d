// The peers' batched variant packs as many points per message as our chunk holds, and its consumer stores
// every message with the cloud's storage code: the round trip, the chunk size it copies, and what lands in SQLite.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sqlite3 from "sqlite3";
import { afterEach, expect, it } from "vitest";
import { Packer, packPoints, pointsPerChunk, unpackPoints } from "../../bench/peers/batch.js";
import { openSink } from "../../bench/peers/sink.js";
import { ChunkBuilder } from "../../runtime/queue/chunk-codec.js";
import { CHUNK_MAX_BYTES, CHUNK_MAX_POINTS } from "../../runtime/datapath/chunk-batcher.js";

let tmp: string | undefined;
afterEach(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
});

it("unpacks exactly the points it packed, of any size, in order", () => {
  const points = [
    Buffer.from("a"),
    Buffer.alloc(0),
    Buffer.alloc(70_000, 7),
    Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]),
  ];
  const back = unpackPoints(packPoints(points));
  expect(back.map((p) => Buffer.from(p).toString("hex"))).toEqual(points.map((p) => p.toString("hex")));
  // A message read from a larger buffer (a view) unpacks the same.
  const msg = packPoints(points);
  const framed = Buffer.concat([Buffer.from("xyz"), msg]).subarray(3);
  expect(unpackPoints(framed)).toHaveLength(4);
});

it("refuses a cut or corrupt message instead of inventing points", () => {
  const msg = packPoints([Buffer.alloc(100, 1), Buffer.alloc(100, 2)]);
  expect(() => unpackPoints(msg.subarray(0, msg.length - 1))).toThrow(/runs past the message/);
  expect(() => unpackPoints(msg.subarray(0, 106))).toThrow(/cut at byte 104/);
});

it("batches as many points per message as one of our full chunks holds at that payload size", () => {
  expect(pointsPerChunk(16)).toBe(CHUNK_MAX_POINTS);
  expect(pointsPerChunk(64 * 1024)).toBe(16);
  // 1 KiB: the byte limit decides; one point fewer would not have filled the chunk.
  const n = pointsPerChunk(1024);
  expect(n).toBeLessThan(CHUNK_MAX_POINTS);
  const b = new ChunkBuilder();
  const p = { name: "sample/counter", type: "bytes", payload: new Uint8Array(1024), elapsedNs: 1e9, srcId: "x" };
  for (let i = 0; i < n - 1; i++) b.add(p);
  expect(b.size).toBeLessThan(CHUNK_MAX_BYTES);
  b.add(p);
  expect(b.size).toBeGreaterThanOrEqual(CHUNK_MAX_BYTES);
  b.reset();
});

it("the peers' consumer store commits each chunk it is given in the cloud's schema, with the cloud's pragmas", async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-sink-"));
  const sink = await openSink(tmp, "power-loss");
  const stored = [
    sink.store([Buffer.alloc(16, 1), Buffer.alloc(16, 2)], 1n),
    sink.store([Buffer.alloc(16, 3)], 2n),
    sink.store(
      Array.from({ length: 1500 }, () => Buffer.alloc(1024)),
      3n,
    ),
  ];
  expect(sink.pending).toBe(1503);
  await Promise.all(stored);
  expect(sink.pending).toBe(0);
  await sink.close();
  const db = new sqlite3.Database(path.join(tmp, "cloud.db"));
  const all = (sql: string) =>
    new Promise<Array<Record<string, unknown>>>((res, rej) =>
      db.all(sql, (e, rows) => (e ? rej(e) : res(rows as Array<Record<string, unknown>>))),
    );
  try {
    expect(
      await all(
        "SELECT sum(COALESCE(last_number, sequence_number) - sequence_number + 1) AS chunks, sum(data_points) AS points FROM meas_chunks",
      ),
    ).toEqual([{ chunks: 3, points: 1503 }]);
    expect(await all("PRAGMA journal_mode")).toEqual([{ journal_mode: "wal" }]);
    // The 1.5 MB chunk went to a payload file, as the cloud stores large chunks.
    expect(fs.readdirSync(path.join(tmp, "chunks")).some((f) => f.endsWith(".chunks"))).toBe(true);
  } finally {
    await new Promise<void>((r) => db.close(() => r()));
  }
});

it("the producer's packer sends a message per maxPoints points and the rest on flush, each point copied", () => {
  const packer = new Packer(3);
  const read = Buffer.alloc(16 * 7);
  const out: Uint8Array[] = [];
  for (let i = 0; i < 7; i++) {
    const view = read.subarray(i * 16, (i + 1) * 16).fill(i);
    const msg = packer.add(view);
    if (msg) out.push(msg);
  }
  read.fill(0xff); // the reader reuses its buffer: the messages must not see it
  expect(packer.count).toBe(1);
  out.push(packer.flush()!);
  expect(packer.flush()).toBeUndefined();
  expect(out.map((m) => unpackPoints(m).map((p) => p[0]))).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
  expect(() => new Packer(0)).toThrow(/at least 1/);
});
