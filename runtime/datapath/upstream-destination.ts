// One upstream's share of a measurement: where the points routed to the upstream id go, and how they
// reach the cloud in real time.
//   persist: true  -> ChunkBatcher -> LMDB sequence -> SendCursor -> iSCP chunks numbered by chunk number.
//                     Offline, chunks go to a sequence with a fresh UUID (recover: true: the deferred upload's
//                     at once; recover: false: dropped when the next stream opens). Online, to a sequence whose
//                     UUID is the iSCP stream id, so a REST upload of a chunk the server already has is `skipped`.
//   persist: false -> straight to the iSCP upstream's buffer (volatile-upstream.ts).
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { QoS, ResultCode } from "../../proto/wire/message.js";
import type { DataPoint } from "../datapoint.js";
import type { IscpClient } from "../iscp/iscp-client.js";
import type { AckResult, ClientUpstream } from "../iscp/upstream.js";
import { ChunkBatcher } from "./chunk-batcher.js";
import { chunkView } from "../queue/chunk-codec.js";
import { SendCursor } from "./send-cursor.js";
import type { SequenceRecord } from "../queue/records.js";
import type { DurableQueue } from "../queue/store.js";
import type { UpstreamSettings } from "../settings/schemas.js";
import type { UpstreamTotals } from "./counters.js";

/**
 * Bytes of chunks sent and not yet acknowledged, on top of send_queue_size (chunks). Room for the cloud's next
 * batch while it commits the one before: a quarter of this held large points back (docs/bench-history.md).
 */
const MAX_UNACKED_BYTES = 64 * 1024 * 1024;
/** Of those, bytes still in the agent's memory (given to the transport, not yet written to the socket): a slow link. */
const MAX_UNSENT_BYTES = 16 * 1024 * 1024;
/** A chunk is one iSCP message: keep it well under the broker's message size limit. */
const MAX_CHUNK_BYTES = 512 * 1024;
/** How long finishing waits for the last acks before leaving the rest to the deferred upload. */
const FINISH_WAIT_MS = 5000;
/** Chunks stored before the first stream opens wait this long to go in real time, then to the deferred upload. */
const FIRST_ATTACH_WAIT_MS = 3000;
/** First pause before chunks the cloud could not store just now are sent again; it doubles up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 5000;
/** Base-time metadata priority for the system clock (edge_rtc), as the former agent sends it. */
const EDGE_RTC_PRIORITY = 20;

export interface MeasurementRef {
  uuid: string;
  baseTimeNs: bigint;
}

export interface StreamLink {
  client: IscpClient;
  /** Bytes sent, for the stream's bitrate. */
  data(bytes: number): void;
}

export interface UpstreamDestination {
  readonly settings: UpstreamSettings;
  push(points: readonly DataPoint[]): Promise<void> | void;
  /** A stream connection is up: open the iSCP upstream on it. */
  attach(link: StreamLink): Promise<void>;
  /** The connection is gone. */
  detach(): Promise<void>;
  /** The measurement ends: flush, wait (bounded) for acks, close the stream and the sequence. */
  finish(): Promise<void>;
  /** Real time has stored chunks it has not sent or had acknowledged. */
  busy(): boolean;
  /** Deferred upload with priority higher_than_realtime holds real time back. */
  setHold(hold: boolean): void;
  readonly counters: { sentChunks: number; droppedPoints: number };
}

const qosOf = (q: UpstreamSettings["qos"]) => (q === "partial" ? QoS.PARTIAL : QoS.UNRELIABLE);

export async function openStream(
  link: StreamLink,
  meas: MeasurementRef,
  s: UpstreamSettings,
  flushIntervalMs?: number,
): Promise<ClientUpstream> {
  // UNRELIABLE: a chunk unacked for 2 s is taken as lost (acks follow the cloud's storage commit, well within it).
  const up = await link.client.openUpstream({
    sessionId: meas.uuid,
    qos: qosOf(s.qos),
    persist: s.persist,
    flushIntervalMs,
    expiryIntervalSec: 30,
    lostAfterMs: 2000,
  });
  await link.client.sendBaseTime(
    { sessionId: meas.uuid, name: "edge_rtc", priority: EDGE_RTC_PRIORITY, elapsedTime: 0n, baseTime: meas.baseTimeNs },
    s.persist,
  );
  return up;
}

/** The stream chunks go out on now, with what it has in flight. */
interface Live {
  up: ClientUpstream;
  cursor: SendCursor;
  link: StreamLink;
  sizes: Map<number, number>;
  bytes: number;
  /** The connection is reconnecting: nothing goes out until the stream is resumed. */
  paused: boolean;
  /** Set while sending pauses before chunks the cloud failed to store go again. */
  backoff?: NodeJS.Timeout;
  /** The last such pause (0 once a chunk is stored again). */
  retryMs: number;
}

export class PersistentUpstream implements UpstreamDestination {
  readonly counters = { sentChunks: 0, droppedPoints: 0, lostChunks: 0 };
  private seq: SequenceRecord;
  private readonly batcher: ChunkBatcher;
  private live: Live | undefined;
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
      onAppended: () => this.pump(),
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
      const live: Live = {
        up,
        cursor: new SendCursor(this.queue, seq.ord, this.window()),
        link,
        sizes: new Map<number, number>(),
        bytes: 0,
        paused: false,
        retryMs: 0,
      };
      up.onAck((results) => this.acked(live, results));
      up.onLost((chunkNos) => this.lost(live, chunkNos));
      up.onError((e) => this.streamLost(live, e));
      link.client.onStateChange((state, why) => {
        if (this.live !== live) return;
        if (state === "reconnecting") this.interrupted(live, why);
        else if (state === "open" && live.paused) {
          live.paused = false;
          this.pump();
        }
      });
      this.live = live;
      this.pump();
    });
  }

  detach(): Promise<void> {
    return this.serial(async () => {
      if (this.live === undefined) return;
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
        this.pump();
        const deadline = Date.now() + FINISH_WAIT_MS;
        while (Date.now() < deadline && this.live === live && this.unsent(live) > 0)
          await new Promise((r) => setTimeout(r, 20));
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
    return this.live !== undefined && this.unsent(this.live) > 0;
  }

  setHold(hold: boolean): void {
    this.hold = hold;
    if (!hold) this.pump();
  }

  /**
   * The connection dropped; the client reconnects and resumes the stream. Chunks in flight lost their
   * acknowledgements (PARTIAL is not resent by the protocol): once resumed they are sent again first,
   * under their own numbers, and the cloud acknowledges any it already had without storing it twice.
   * (If the stream cannot be resumed, its sequence closes and they go by deferred upload.)
   */
  private interrupted(live: Live, why?: string): void {
    live.paused = true;
    live.cursor.requeue(live.cursor.unacked);
    live.sizes.clear();
    live.bytes = 0;
    this.log?.info({ upstream: this.settings.id, reason: why }, "iSCP connection interrupted; resuming");
  }

  /** The stream could not be resumed (the cloud no longer holds it): continue on a new stream. */
  private streamLost(live: Live, e: Error): void {
    this.log?.warn(
      { upstream: this.settings.id, err: e.message },
      "iSCP stream could not be resumed; opening a new one",
    );
    void this.serial(async () => {
      if (this.live !== live) return;
      this.live = undefined;
      if (!this.finished) await this.switchTo(this.openOffline());
    })
      .then(() => (this.finished ? undefined : this.attach(live.link)))
      .catch((err: unknown) =>
        this.log?.warn({ upstream: this.settings.id, err: String(err) }, "no new stream; waiting for the link"),
      );
  }

  private unsent(live: Live): number {
    const last = this.queue.getSequence(live.cursor.seqOrd)?.lastChunkNo ?? 0;
    return live.cursor.inFlightCount + (last - live.cursor.position);
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

  private acked(live: Live, results: AckResult[]): void {
    const ok: number[] = [];
    const failed: number[] = [];
    const again: number[] = [];
    for (const r of results)
      (r.resultCode === 0 ? ok : r.resultCode === ResultCode.PROCESS_FAILED ? again : failed).push(r.sequenceNumber);
    this.totals.chunksAcked += ok.length;
    this.release(live, ok);
    if (ok.length > 0) live.retryMs = 0;
    if (again.length > 0)
      this.retryLater(live, again, results.find((r) => r.resultCode === ResultCode.PROCESS_FAILED)!.resultString);
    if (failed.length > 0) {
      // Not stored by the server: leave them for the deferred upload (they stay in this sequence).
      this.release(live, failed);
      live.cursor.giveUp(failed);
      this.log?.warn(
        {
          upstream: this.settings.id,
          chunks: failed.length,
          reason: results.find((r) => r.resultCode !== 0)?.resultString,
        },
        "chunks refused in real time",
      );
    }
    void live.cursor.ack(ok).then(() => this.pump());
  }

  /**
   * Chunks the cloud could not store just now (PROCESS_FAILED: its database away, its disk full) go again on this
   * stream under their own numbers after a pause, as the broker stores a re-sent copy of a chunk whose storage
   * failed. Left for the deferred upload instead, they would wait for the stream's end, however long it lasts.
   */
  private retryLater(live: Live, chunkNos: number[], reason: string): void {
    this.release(live, chunkNos);
    live.cursor.requeue(chunkNos);
    if (live.backoff !== undefined) return;
    live.retryMs = Math.min(RETRY_MAX_MS, live.retryMs * 2 || RETRY_FIRST_MS);
    this.log?.warn(
      { upstream: this.settings.id, chunks: chunkNos.length, reason, retry_ms: live.retryMs },
      "chunks not stored by the cloud; sending them again",
    );
    live.backoff = setTimeout(() => {
      live.backoff = undefined;
      this.pump();
    }, live.retryMs);
    live.backoff.unref();
  }

  /**
   * UNRELIABLE chunks whose datagrams got no ack in time: like refused ones they stay stored (recover:
   * deferred upload once this sequence closes; the cloud skips any it had after all) and free the window.
   */
  private lost(live: Live, chunkNos: number[]): void {
    this.release(live, chunkNos);
    live.cursor.giveUp(chunkNos);
    this.counters.lostChunks += chunkNos.length;
    this.log?.info({ upstream: this.settings.id, chunks: chunkNos.length }, "unreliable chunks lost in real time");
    this.pump();
  }

  private release(live: Live, chunkNos: readonly number[]): void {
    for (const n of chunkNos) {
      live.bytes -= live.sizes.get(n) ?? 0;
      live.sizes.delete(n);
    }
  }

  /** Sends stored chunks while the window (send_queue_size chunks, and the byte bounds) has room. */
  private pump(): void {
    const live = this.live;
    if (live === undefined || this.hold || live.paused || live.backoff !== undefined) return;
    try {
      // Stopped by either bound, the pump runs again on the next ack: unsent bytes mean acks are still to come.
      while (live.bytes < MAX_UNACKED_BYTES && (live.link.client.transport?.bufferedBytes() ?? 0) < MAX_UNSENT_BYTES) {
        // Read without a copy: the chunk is encoded into its frame at once (writeStoredChunk reads it during the call).
        const [c] = live.cursor.take(1, true);
        if (c === undefined) break;
        let view;
        try {
          view = chunkView(c.data);
        } catch (e) {
          // Corrupt bytes: not sent; the deferred upload drops (and reports) the chunk once the sequence closes.
          live.cursor.giveUp([c.chunkNo]);
          this.log?.warn(
            { upstream: this.settings.id, chunk: c.chunkNo, err: String(e) },
            "stored chunk could not be read",
          );
          continue;
        }
        live.up.writeStoredChunk(c.chunkNo, view); // numbers grow, except for chunks sent again after a resume
        live.sizes.set(c.chunkNo, c.data.length);
        live.bytes += c.data.length;
        this.counters.sentChunks++;
        this.totals.pointsSent += view.count;
        live.link.data(c.data.length);
      }
    } catch (e) {
      // The stream closed under us: the link's close handling detaches.
      this.log?.debug({ upstream: this.settings.id, err: String(e) }, "real-time send stopped");
    }
  }
}
