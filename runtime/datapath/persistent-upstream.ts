// A persist: true upstream's share of a measurement: ChunkBatcher -> LMDB sequence -> RealtimeSender -> iSCP
// chunks numbered by chunk number. Offline, chunks go to a sequence with a fresh UUID (recover: true: the deferred
// upload's at once; recover: false: dropped when the next stream opens). Online, to a sequence whose UUID is the
// iSCP stream id, so a REST upload of a chunk the server already has is `skipped`.
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { DataPoint } from "../datapoint.js";
import { ChunkBatcher } from "../queue/batcher.js";
import type { SequenceRecord } from "../queue/records.js";
import type { DurableQueue } from "../queue/store.js";
import type { UpstreamSettings } from "../settings/schemas.js";
import type { UpstreamTotals } from "./counters.js";
import { RealtimeSender } from "./realtime-sender.js";
import { openStream, type MeasurementRef, type StreamLink, type UpstreamDestination } from "./upstream-destination.js";

/** A chunk is one iSCP message: keep it well under the broker's message size limit. */
const MAX_CHUNK_BYTES = 512 * 1024;
/** How long finishing waits for the last acks before leaving the rest to the deferred upload. */
const FINISH_WAIT_MS = 5000;
/** Chunks stored before the first stream opens wait this long to go in real time, then to the deferred upload. */
const FIRST_ATTACH_WAIT_MS = 3000;

export class PersistentUpstream implements UpstreamDestination {
  readonly counters = { sentChunks: 0, droppedPoints: 0, lostChunks: 0 };
  private seq: SequenceRecord;
  private readonly batcher: ChunkBatcher;
  /** The stream chunks go out on now. */
  private live: RealtimeSender | undefined;
  private hold = false;
  private finished = false;
  /** The first sequence of the measurement, until a stream adopts it (or the wait ends). */
  private adoptable: number | undefined;
  private readonly adoptTimer: NodeJS.Timeout;
  /** attach/detach/finish run one at a time (each switches sequences). */
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly queue: DurableQueue,
    private readonly meas: MeasurementRef,
    readonly settings: UpstreamSettings,
    private readonly window: () => number,
    private readonly log?: Logger,
    private readonly totals: UpstreamTotals = { pointsSent: 0, chunksAcked: 0 },
  ) {
    // The first sequence is real-time: the first stream adopts it, so data from the start of the
    // measurement goes in real time, not through the deferred upload.
    this.seq = queue.openSequence(meas.uuid, settings.id, randomUUID(), settings.recover, true);
    this.adoptable = this.seq.ord;
    this.adoptTimer = setTimeout(() => void this.giveUpAdoption(), FIRST_ATTACH_WAIT_MS);
    this.adoptTimer.unref();
    this.batcher = new ChunkBatcher(queue, this.seq.ord, {
      flushPolicy: settings.flush_policy,
      flushIntervalMs: settings.flush_interval,
      maxBytes: MAX_CHUNK_BYTES,
      // Sent while its commit runs: the commit is when the points count as accepted, not when they may leave.
      onAppended: () => this.live?.pump(),
    });
  }

  push(points: readonly DataPoint[]): Promise<void> {
    return this.batcher.push(points);
  }

  attach(link: StreamLink): Promise<void> {
    return this.serial(async () => {
      if (this.finished) return;
      const up = await openStream(link, this.meas, this.settings);
      let seq: SequenceRecord;
      if (this.adoptable === this.seq.ord) {
        await this.queue.renameSequence(this.seq.ord, up.streamId);
        seq = this.seq;
      } else {
        seq = this.queue.openSequence(this.meas.uuid, this.settings.id, up.streamId, this.settings.recover, true);
        await this.switchTo(seq);
      }
      this.adoptable = undefined;
      clearTimeout(this.adoptTimer);
      const live: RealtimeSender = new RealtimeSender(up, link, {
        queue: this.queue,
        seqOrd: seq.ord,
        window: this.window(),
        upstreamId: this.settings.id,
        counters: this.counters,
        totals: this.totals,
        held: () => this.hold,
        onStreamLost: (e) => this.streamLost(live, e),
        log: this.log,
      });
      this.live?.stop();
      this.live = live;
      live.pump();
    });
  }

  detach(): Promise<void> {
    return this.serial(async () => {
      if (this.live === undefined) return;
      this.live.stop();
      this.live = undefined;
      if (!this.finished) await this.switchTo(this.openOffline());
    });
  }

  finish(): Promise<void> {
    return this.serial(async () => {
      if (this.finished) return;
      this.finished = true;
      this.adoptable = undefined;
      clearTimeout(this.adoptTimer);
      await this.batcher.flush();
      const live = this.live;
      let closedInCloud = false;
      if (live !== undefined) {
        live.pump();
        const deadline = Date.now() + FINISH_WAIT_MS;
        while (Date.now() < deadline && this.live === live && live.unsent() > 0)
          await new Promise((r) => setTimeout(r, 20));
        live.stop();
        this.live = undefined;
        closedInCloud = await live.up.close({ closeSession: true }).then(
          () => true,
          () => false,
        );
      }
      await this.queue.closeSequence(this.seq.ord);
      // Streamed in real time, but the cloud did not hear the stream end (no connection at the end, or the
      // close failed): the deferred upload tells it (sequence totals, complete), even with nothing left to send.
      if (!closedInCloud && this.counters.sentChunks > 0) await this.queue.markOwesCompletion(this.meas.uuid, true);
    });
  }

  /** No stream came in time: what was stored goes to the deferred upload (recover) or is dropped. */
  private giveUpAdoption(): Promise<void> {
    return this.serial(async () => {
      if (this.adoptable !== this.seq.ord || this.finished) return;
      this.adoptable = undefined;
      await this.switchTo(this.openOffline());
    });
  }

  busy(): boolean {
    return this.live !== undefined && this.live.unsent() > 0;
  }

  setHold(hold: boolean): void {
    this.hold = hold;
    if (!hold) this.live?.pump();
  }

  /**
   * The stream could not be resumed (the cloud no longer holds it): continue on a new stream. If that cannot be
   * opened either (the cloud cannot store just now), the connection is closed: the stream machine connects again
   * after its backoff and the next connection opens the stream (datapath.upstreamLinked), so the upstream never
   * stays without a stream while the link is up.
   */
  private streamLost(live: RealtimeSender, e: Error): void {
    this.log?.warn(
      { upstream: this.settings.id, err: e.message },
      "iSCP stream could not be resumed; opening a new one",
    );
    void this.serial(async () => {
      if (this.live !== live) return;
      live.stop();
      this.live = undefined;
      if (!this.finished) await this.switchTo(this.openOffline());
    })
      .then(() => (this.finished ? undefined : this.attach(live.link)))
      .catch((err: unknown) => {
        this.log?.warn(
          { upstream: this.settings.id, err: String(err) },
          "no new iSCP stream; connecting again after a pause",
        );
        void live.link.client.close();
      });
  }

  private serial(f: () => Promise<void>): Promise<void> {
    const next = this.chain.then(f, f);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Continue in `seq`: the batch in hand goes into the old sequence, which is then closed. */
  private async switchTo(seq: SequenceRecord): Promise<void> {
    const old = this.seq;
    this.seq = seq;
    await this.batcher
      .switchSequence(seq.ord)
      .catch((e: unknown) => this.log?.warn({ err: String(e) }, "flush on sequence switch failed"));
    await this.queue.closeSequence(old.ord);
  }

  /** Offline chunks: recover -> deferred upload's at once (realtime: false); else dropped when closed. */
  private openOffline(): SequenceRecord {
    return this.queue.openSequence(
      this.meas.uuid,
      this.settings.id,
      randomUUID(),
      this.settings.recover,
      !this.settings.recover,
    );
  }
}
