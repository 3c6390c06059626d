// The blocks together, with a fake real-time sender: connector (launched) -> upstream channel -> router ->
// batcher -> LMDB -> cursor (acks) ... link lost ... new sequence ... -> deferred upload of what was left.
// Every point the connector wrote ends up delivered exactly once (real time or deferred).
import { join } from "node:path";
import * as Schema from "effect/Schema";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pb } from "../../../proto/gen/pb.js";
import { takeMeasurementClock } from "../../../runtime/ipc/clock.js";
import { Launch } from "../../../runtime/ipc/schema.js";
import { openUpstreamChannel } from "../../../runtime/ipc/upstream-channel.js";
import { ChunkBatcher } from "../../../runtime/datapath/chunk-batcher.js";
import { chunkPoints, decodeChunk } from "../../../runtime/queue/chunk-codec.js";
import { SendCursor } from "../../../runtime/datapath/send-cursor.js";
import { DestinationRouter } from "../../../runtime/datapath/destination-router.js";
import { DurableQueue } from "../../../runtime/queue/store.js";
import { nextUploadBatch } from "../../../runtime/deferred/store-data-chunks.js";
import { NODE_TS, SAMPLE_CONNECTOR, seqOf, tempDir, waitFor } from "../../support/datapath.js";

const M = "77777777-7777-4777-8777-777777777777";
let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await cleanup();
});

describe("data path blocks together", () => {
  it("delivers every point exactly once across a lost link (real time, then deferred upload)", async () => {
    const COUNT = 20_000;
    const q = await DurableQueue.open({ dir: join(dir, "q"), capacityMiB: 64, limitDataStorage: true });
    const clock = takeMeasurementClock();
    q.startMeasurement(M, clock.baseTimeNs);
    const delivered: number[] = [];
    const deliver = (data: Buffer) => delivered.push(...chunkPoints(decodeChunk(data)).map(seqOf));

    let seq = q.openSequence(M, "up", "aaaaaaaa-0000-4000-8000-000000000001", true).ord;
    let cursor = new SendCursor(q, seq, 8);
    const batcher = new ChunkBatcher(q, seq, { flushPolicy: "interval", flushIntervalMs: 5 });
    const router = new DestinationRouter();
    router.set("up", batcher);
    const ch = openUpstreamChannel(
      {
        settings: {
          id: "dc",
          data_name_prefix: "1/",
          format: "iscp-v2-compat",
          ipc: { type: "fifo", path: join(dir, "up.fifo") },
          launch: Schema.decodeUnknownSync(Launch)({
            command: NODE_TS[0],
            args: [...NODE_TS.slice(1), SAMPLE_CONNECTOR, "--rate", "20000", "--count", String(COUNT)],
            restart: { policy: "never" },
          }),
          dest_ids: ["up"],
        },
        clockBase: clock.clockBase,
        sink: (points, ids) => router.route(points, ids),
      },
      { opened() {}, closed() {}, failed() {}, data() {} },
    );

    // Fake sender: acks what it sends while the link is up. The link drops once 5000 points were delivered:
    // in-flight chunks are given up, the sequence closes, a new stream (sequence) takes over.
    let linkUp = true;
    let reopened = false;
    const sender = setInterval(() => {
      if (!linkUp) return;
      const chunks = cursor.take();
      if (!reopened && delivered.length >= 5000) {
        linkUp = false;
        cursor.giveUp(chunks.map((c) => c.chunkNo)); // sent, never acked
        const old = seq;
        void (async () => {
          // New points go to the new sequence first; then the old one closes (its rest is deferred work).
          seq = q.openSequence(M, "up", "aaaaaaaa-0000-4000-8000-000000000002", true).ord;
          await batcher.switchSequence(seq);
          await q.closeSequence(old);
          cursor = new SendCursor(q, seq, 8);
          reopened = true;
          linkUp = true;
        })();
        return;
      }
      for (const c of chunks) deliver(c.data);
      void cursor.ack(chunks.map((c) => c.chunkNo));
    }, 10);

    await waitFor(() => ch.stats.accepted === COUNT, 30_000, "all points accepted");
    await waitFor(() => reopened && q.getSequence(seq)!.chunkCount === 0, 30_000, "new sequence all acked");
    clearInterval(sender);
    await ch.close();
    await q.closeSequence(seq);

    // Deferred upload: whatever is still stored, as StoreDataChunks bodies.
    let uploaded = 0;
    for (const s of q.pendingSequences()) {
      for (let b = nextUploadBatch(q, s.ord); b !== undefined; b = nextUploadBatch(q, s.ord)) {
        const msg = pb.StoreDataChunks.decode(b.body);
        expect(msg.sequenceUuid).toBe(s.uuid);
        for (const c of msg.chunks)
          for (const g of c.dataPointGroups!)
            for (const p of g.dataPoints!) {
              delivered.push(Number(Buffer.from(p.payload!).readBigUInt64BE(0)));
              uploaded++;
            }
        await q.ack(s.ord, b.chunkNos);
      }
    }
    expect(uploaded).toBeGreaterThan(0);
    expect(delivered.length).toBe(COUNT);
    expect([...delivered].sort((a, b) => a - b)).toEqual(Array.from({ length: COUNT }, (_, i) => i));
    expect(q.getMeasurement(M)).toMatchObject({ chunkCount: 0, pendingDataSize: 0 });
    const seqs = q.sequencesOf(M);
    expect(seqs.reduce((n, s) => n + s.points, 0)).toBe(COUNT);
    await q.close();
  });
});
