// The queue's measurement records stay bounded: finished measurements (ended, delivered, nothing owed) beyond the
// newest few are forgotten, in memory and in LMDB; one that still holds data or owes the cloud its completion stays.
import { describe, expect, it } from "vitest";
import { DurableQueue } from "../../../runtime/queue/store.js";
import { pts, queueDirs } from "./helpers.js";

const t = queueDirs();

async function openQueue(keepFinished: number): Promise<DurableQueue> {
  return t.track(await DurableQueue.open({ dir: t.dir(), capacityMiB: 1024, limitDataStorage: true, keepFinished }));
}

const uuidOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;

/** One measurement as a run takes it: a real-time sequence and the deferred one, a chunk sent and acked, then the end. */
async function takeMeasurement(q: DurableQueue, i: number, opts: { acked: boolean; owes?: boolean }): Promise<void> {
  const uuid = uuidOf(i);
  q.startMeasurement(uuid, BigInt(i));
  const up = q.openSequence(uuid, "up", `${uuid}-up`, true);
  const deferred = q.openSequence(uuid, "deferred", `${uuid}-def`, true, false);
  const { chunkNo, durable } = q.append(up.ord, pts(3));
  await durable;
  if (opts.acked) await q.ack(up.ord, [chunkNo]);
  await q.closeSequence(up.ord);
  await q.closeSequence(deferred.ord);
  if (opts.owes) await q.markOwesCompletion(uuid, true);
  await q.endMeasurement(uuid);
}

describe("queue measurement records", () => {
  it("keep the newest finished measurements and those still holding data or owing completion, across reopens", async () => {
    let q = await openQueue(3);
    await takeMeasurement(q, 1, { acked: false }); // its chunk waits for the deferred upload
    await takeMeasurement(q, 2, { acked: true, owes: true }); // the cloud is still to hear it is complete
    for (let i = 3; i <= 40; i++) await takeMeasurement(q, i, { acked: true });
    const kept = [1, 2, 38, 39, 40].map(uuidOf);
    expect(q.listMeasurements().map((m) => m.uuid)).toEqual(kept);
    expect(q.sequencesOf(uuidOf(3))).toEqual([]);
    expect(q.sequencesOf(uuidOf(40))).toHaveLength(2);

    // The completion reported: measurement 2 is finished, and the oldest of the finished ones goes.
    await q.markOwesCompletion(uuidOf(2), false);
    expect(q.listMeasurements().map((m) => m.uuid)).toEqual([1, 38, 39, 40].map(uuidOf));
    // Its data uploaded at last: measurement 1 is finished and older than the three kept.
    await q.ack(q.pendingSequences()[0]!.ord, [1]);
    expect(q.listMeasurements().map((m) => m.uuid)).toEqual([38, 39, 40].map(uuidOf));

    // What LMDB holds is as bounded: a reopen that would keep every finished one finds only these.
    await q.close();
    q = await openQueue(1000);
    expect(q.listMeasurements().map((m) => m.uuid)).toEqual([38, 39, 40].map(uuidOf));
    expect([1, 2, 3, 37].flatMap((i) => q.sequencesOf(uuidOf(i)))).toEqual([]);
    expect(q.stats.chunks).toBe(0);
  });

  it("forgets finished measurements beyond the bound at open (records an earlier run left)", async () => {
    let q = await openQueue(1000);
    for (let i = 1; i <= 6; i++) await takeMeasurement(q, i, { acked: true });
    await q.close();
    q = await openQueue(2);
    expect(q.listMeasurements().map((m) => m.uuid)).toEqual([5, 6].map(uuidOf));
    await q.close();
    q = await openQueue(1000);
    expect(q.listMeasurements().map((m) => m.uuid)).toEqual([5, 6].map(uuidOf));
  });
});
