// Deferred upload: what real time could not deliver (closed sequences with unacked chunks, and the
// `deferred` destination's sequences) goes to the cloud through its REST API, oldest measurement
// first. A chunk's number is its sequence_number, so the cloud answers `skipped` for one it already
// has (sent in real time but never acked): each point ends up there exactly once. Chunks are released
// from the queue only after the cloud answered for them.
//
// Bandwidth against real time, by `priority`:
//   higher_than_realtime: real-time upstreams hold their sends while an upload runs;
//   same_as_realtime:     both send at once and share the link;
//   lower_than_realtime:  a batch goes only while no real-time upstream has chunks waiting.
import type { Logger } from "pino";
import type { UploaderOpener } from "../../machines/deferred-upload.js";
import { errorMessage } from "../../machines/vocabulary.js";
import { nextUploadBatch } from "./store-data-chunks.js";
import type { DurableQueue } from "../queue/store.js";
import type { SequenceRecord } from "../queue/records.js";
import { MeasurementRestClient, RestError } from "./rest-client.js";

export interface RealtimeControl {
  /** Some real-time upstream has chunks waiting to be sent. */
  busy(): boolean;
  setHoldRealtime(hold: boolean): void;
}

export interface DeferredUploaderOptions {
  queue: DurableQueue;
  realtime: RealtimeControl;
  log?: Logger;
  /** Stored chunk bytes per request (default 1 MiB). */
  batchBytes?: number;
}

const IDLE_POLL_MS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function deferredUploaderOpener(o: DeferredUploaderOptions): UploaderOpener {
  return ({ settings, session }, cb) => {
    let stopped = false;
    const client = new MeasurementRestClient(session);
    const known = new Set<string>(); // measurements this run created or found in the cloud
    const hold = settings.priority === "higher_than_realtime";

    const waitForTurn = async () => {
      if (settings.priority !== "lower_than_realtime") return;
      while (!stopped && o.realtime.busy()) await sleep(IDLE_POLL_MS);
    };

    /** Uploads what is stored of one sequence; false when it had nothing to give. */
    const uploadSequence = async (seq: SequenceRecord): Promise<boolean> => {
      const meas = o.queue.getMeasurement(seq.measUuid);
      if (meas === undefined) return false;
      let sent = false;
      for (;;) {
        await waitForTurn();
        if (stopped) return sent;
        const batch = nextUploadBatch(o.queue, seq.ord, 0, o.batchBytes);
        if (batch === undefined) return sent;
        if (batch.unreadable.length > 0) {
          // Nothing can send them (corrupt bytes): released, so they do not hold back everything stored after them.
          o.log?.warn({ sequence: seq.uuid, chunks: batch.unreadable }, "stored chunks could not be read; dropped");
          await o.queue.ack(seq.ord, batch.unreadable);
          if (batch.chunkNos.length === 0) continue;
        }
        if (!known.has(seq.measUuid)) {
          await client.ensureMeasurement(seq.measUuid, meas.baseTimeNs);
          // Recorded before any chunk is released, so a crash cannot leave it uploaded but never completed.
          await o.queue.markOwesCompletion(seq.measUuid, true);
          known.add(seq.measUuid);
        }
        const results = await client.storeChunks(batch.body);
        const done = new Set(
          results.filter((r) => r.result === "ok" || r.result === "skipped").map((r) => r.sequence_number),
        );
        const acked = batch.chunkNos.filter((n) => done.has(n));
        if (acked.length < batch.chunkNos.length)
          throw new Error(
            `the cloud stored ${acked.length} of ${batch.chunkNos.length} chunks of sequence ${seq.uuid}`,
          );
        await o.queue.ack(seq.ord, acked);
        sent = true;
        cb.data(batch.body.length);
      }
    };

    /**
     * An ended measurement with nothing left to upload, some of it sent by this upload (in this run or an
     * earlier one, maybe while it was still being taken): the cloud learns its totals and that it is complete.
     */
    const complete = async (measUuid: string) => {
      for (const s of o.queue.sequencesOf(measUuid)) {
        if (s.lastChunkNo === 0) continue;
        await client.finishSequence(measUuid, s.uuid, s.points, s.lastChunkNo).catch((e: unknown) => {
          // A sequence the cloud never saw (all its chunks dropped) has nothing to finish.
          if (!(e instanceof RestError && e.status === 404)) throw e;
        });
      }
      await client.complete(measUuid).catch((e: unknown) => {
        // Deleted in the cloud meanwhile: nothing to complete (and no reason to retry forever).
        if (!(e instanceof RestError && e.status === 404)) throw e;
        o.log?.warn({ measurement: measUuid }, "measurement no longer in the cloud; not completed");
      });
      await o.queue.markOwesCompletion(measUuid, false);
      o.log?.info({ measurement: measUuid }, "deferred upload complete");
    };

    const run = async () => {
      if (hold) o.realtime.setHoldRealtime(true);
      for (;;) {
        let progressed = false;
        for (const seq of o.queue.pendingSequences()) {
          if (stopped) return;
          if (await uploadSequence(seq)) progressed = true;
        }
        for (const m of o.queue.completionsDue()) {
          if (stopped) return;
          await complete(m.uuid);
        }
        if (stopped) return;
        if (!progressed) break;
      }
      cb.closed("everything stored has been uploaded");
    };

    run()
      .catch((e: unknown) => {
        if (stopped) return;
        o.log?.warn({ err: errorMessage(e) }, "deferred upload failed; retrying");
        cb.failed(errorMessage(e));
      })
      .finally(() => {
        // After close, a newer run may hold real time already.
        if (hold && !stopped) o.realtime.setHoldRealtime(false);
      });

    return {
      close: () => {
        stopped = true;
        if (hold) o.realtime.setHoldRealtime(false);
      },
    };
  };
}
