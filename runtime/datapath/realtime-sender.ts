// The real-time sender of a persistent upstream on one iSCP stream: sends the sequence's stored chunks in order
// within the window (send_queue_size chunks and the byte bounds), releases what the cloud acknowledges, sends
// again what it could not store just now, and across a connection's interruption sends again what was in flight.
import type { Logger } from "pino";
import { ResultCode } from "../../proto/wire/message.js";
import type { AckResult, ClientUpstream } from "../iscp/upstream.js";
import { chunkView } from "../queue/chunk-codec.js";
import { SendCursor } from "../queue/cursor.js";
import type { DurableQueue } from "../queue/store.js";
import type { UpstreamTotals } from "./counters.js";
import type { StreamLink } from "./upstream-destination.js";

/**
 * Bytes of chunks sent and not yet acknowledged, on top of send_queue_size (chunks). Room for the cloud's next
 * batch while it commits the one before: a quarter of this held large points back (docs/bench-history.md).
 */
const MAX_UNACKED_BYTES = 64 * 1024 * 1024;
/** Of those, bytes still in the agent's memory (given to the transport, not yet written to the socket): a slow link. */
const MAX_UNSENT_BYTES = 16 * 1024 * 1024;
/** First pause before chunks the cloud could not store just now are sent again; it doubles up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 5000;
/** Chunk numbers remembered as lost since the last ack, at most (beyond, the oldest are left to the deferred upload). */
const MAX_LOST_SINCE_ACK = 100_000;

export interface SenderOptions {
  queue: DurableQueue;
  seqOrd: number;
  window: number;
  upstreamId: string;
  counters: { sentChunks: number; lostChunks: number };
  totals: UpstreamTotals;
  /** Deferred upload with priority higher_than_realtime holds real time back. */
  held(): boolean;
  /** The stream could not be resumed after the connection came back. */
  onStreamLost(e: Error): void;
  log?: Logger;
}

export class RealtimeSender {
  readonly cursor: SendCursor;
  private readonly sizes = new Map<number, number>();
  private bytes = 0;
  /** The connection is reconnecting: nothing goes out until the stream is resumed. */
  private paused = false;
  /** Set while sending pauses before chunks the cloud failed to store go again. */
  private backoff?: NodeJS.Timeout;
  /** The last such pause (0 once a chunk is stored again). */
  private retryMs = 0;
  /**
   * UNRELIABLE chunks given up as lost with no ack since: all of them, when the cloud went away without closing the
   * connection (kill -9 over QUIC is noticed only at the next ping), so they are sent again if the connection drops.
   */
  private lostSinceAck: number[] = [];
  private stopped = false;

  constructor(
    readonly up: ClientUpstream,
    readonly link: StreamLink,
    private readonly o: SenderOptions,
  ) {
    this.cursor = new SendCursor(o.queue, o.seqOrd, o.window);
    up.onAck((results) => this.acked(results));
    up.onLost((chunkNos) => this.lost(chunkNos));
    up.onError((e) => {
      if (!this.stopped) o.onStreamLost(e);
    });
    link.client.onStateChange((state, why) => {
      if (this.stopped) return;
      if (state === "reconnecting") this.interrupted(why);
      else if (state === "open" && this.paused) {
        this.paused = false;
        this.pump();
      }
    });
  }

  /** No longer the upstream's sender: sends nothing more (acks still release what they name). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.backoff);
  }

  /** Chunks stored and not yet sent or acknowledged. */
  unsent(): number {
    const last = this.o.queue.getSequence(this.cursor.seqOrd)?.lastChunkNo ?? 0;
    return this.cursor.inFlightCount + (last - this.cursor.position);
  }

  /**
   * The connection dropped; the client reconnects and resumes the stream. Chunks in flight lost their
   * acknowledgements (PARTIAL is not resent by the protocol): once resumed they are sent again first,
   * under their own numbers, and the cloud acknowledges any it already had without storing it twice.
   * (If the stream cannot be resumed, its sequence closes and they go by deferred upload.) UNRELIABLE chunks given
   * up as lost since the last ack went with the connection too: they are sent again with them, as over WebSocket,
   * where the cut is noticed at once, they would still have been in flight.
   */
  private interrupted(why?: string): void {
    this.paused = true;
    this.cursor.requeue([...this.cursor.unacked, ...this.lostSinceAck]);
    this.lostSinceAck = [];
    this.sizes.clear();
    this.bytes = 0;
    this.o.log?.info({ upstream: this.o.upstreamId, reason: why }, "iSCP connection interrupted; resuming");
  }

  private acked(results: AckResult[]): void {
    const ok: number[] = [];
    const failed: number[] = [];
    const again: number[] = [];
    for (const r of results)
      (r.resultCode === 0 ? ok : r.resultCode === ResultCode.PROCESS_FAILED ? again : failed).push(r.sequenceNumber);
    this.o.totals.chunksAcked += ok.length;
    this.release(ok);
    if (ok.length > 0) {
      this.retryMs = 0;
      this.lostSinceAck = [];
    }
    if (again.length > 0)
      this.retryLater(again, results.find((r) => r.resultCode === ResultCode.PROCESS_FAILED)!.resultString);
    if (failed.length > 0) {
      // Not stored by the server: leave them for the deferred upload (they stay in this sequence).
      this.release(failed);
      this.cursor.giveUp(failed);
      this.o.log?.warn(
        {
          upstream: this.o.upstreamId,
          chunks: failed.length,
          reason: results.find((r) => r.resultCode !== 0)?.resultString,
        },
        "chunks refused in real time",
      );
    }
    void this.cursor.ack(ok).then(() => this.pump());
  }

  /**
   * Chunks the cloud could not store just now (PROCESS_FAILED: its database away, its disk full) go again on this
   * stream under their own numbers after a pause, as the broker stores a re-sent copy of a chunk whose storage
   * failed. Left for the deferred upload instead, they would wait for the stream's end, however long it lasts.
   */
  private retryLater(chunkNos: number[], reason: string): void {
    this.release(chunkNos);
    this.cursor.requeue(chunkNos);
    if (this.backoff !== undefined || this.stopped) return;
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2 || RETRY_FIRST_MS);
    this.o.log?.warn(
      { upstream: this.o.upstreamId, chunks: chunkNos.length, reason, retry_ms: this.retryMs },
      "chunks not stored by the cloud; sending them again",
    );
    this.backoff = setTimeout(() => {
      this.backoff = undefined;
      this.pump();
    }, this.retryMs);
    this.backoff.unref();
  }

  /**
   * UNRELIABLE chunks whose datagrams got no ack in time: like refused ones they stay stored (recover:
   * deferred upload once this sequence closes; the cloud skips any it had after all) and free the window.
   */
  private lost(chunkNos: number[]): void {
    this.release(chunkNos);
    this.cursor.giveUp(chunkNos);
    this.lostSinceAck.push(...chunkNos);
    if (this.lostSinceAck.length > MAX_LOST_SINCE_ACK)
      this.lostSinceAck.splice(0, this.lostSinceAck.length - MAX_LOST_SINCE_ACK);
    this.o.counters.lostChunks += chunkNos.length;
    this.o.log?.info({ upstream: this.o.upstreamId, chunks: chunkNos.length }, "unreliable chunks lost in real time");
    this.pump();
  }

  private release(chunkNos: readonly number[]): void {
    for (const n of chunkNos) {
      this.bytes -= this.sizes.get(n) ?? 0;
      this.sizes.delete(n);
    }
  }

  /** Sends stored chunks while the window (send_queue_size chunks, and the byte bounds) has room. */
  pump(): void {
    if (this.stopped || this.o.held() || this.paused || this.backoff !== undefined) return;
    const { up, link, cursor } = this;
    try {
      // Stopped by either bound, the pump runs again on the next ack: unsent bytes mean acks are still to come.
      while (this.bytes < MAX_UNACKED_BYTES && (link.client.transport?.bufferedBytes() ?? 0) < MAX_UNSENT_BYTES) {
        // Read without a copy: the chunk is encoded into its frame at once (writeStoredChunk reads it during the call).
        const [c] = cursor.take(1, true);
        if (c === undefined) break;
        let view;
        try {
          view = chunkView(c.data);
        } catch (e) {
          // Corrupt bytes: not sent; the deferred upload drops (and reports) the chunk once the sequence closes.
          cursor.giveUp([c.chunkNo]);
          this.o.log?.warn(
            { upstream: this.o.upstreamId, chunk: c.chunkNo, err: String(e) },
            "stored chunk could not be read",
          );
          continue;
        }
        up.writeStoredChunk(c.chunkNo, view); // numbers grow, except for chunks sent again after a resume
        this.sizes.set(c.chunkNo, c.data.length);
        this.bytes += c.data.length;
        this.o.counters.sentChunks++;
        this.o.totals.pointsSent += view.count;
        link.data(c.data.length);
      }
    } catch (e) {
      // The stream closed under us: the link's close handling detaches.
      this.o.log?.debug({ upstream: this.o.upstreamId, err: String(e) }, "real-time send stopped");
    }
  }
}
