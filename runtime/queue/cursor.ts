// The real-time sender's view of one sequence: hands out stored chunks in order, at most `window`
// (send_queue_size) unacknowledged at a time, so a slow link backs data up in LMDB, not in memory.
import type { DurableQueue, StoredChunk } from "./store.js";

export class SendCursor {
  private after = 0;
  private readonly inFlight = new Set<number>();

  constructor(
    private readonly queue: DurableQueue,
    readonly seqOrd: number,
    private window: number,
  ) {}

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Last chunk number handed out. */
  get position(): number {
    return this.after;
  }

  setWindow(window: number): void {
    this.window = window;
  }

  /** The next stored chunks (at most `limit`) that fit in the window (empty when none or the window is full). */
  take(limit = Infinity): StoredChunk[] {
    const room = Math.min(limit, this.window - this.inFlight.size);
    if (room <= 0) return [];
    const chunks = this.queue.readChunks(this.seqOrd, this.after, room);
    for (const c of chunks) {
      this.inFlight.add(c.chunkNo);
      this.after = c.chunkNo;
    }
    return chunks;
  }

  /** Acknowledged by the server: released from the queue. */
  async ack(chunkNos: readonly number[]): Promise<void> {
    for (const n of chunkNos) this.inFlight.delete(n);
    await this.queue.ack(this.seqOrd, chunkNos);
  }

  /** Chunks handed out and not yet acknowledged. */
  get unacked(): number[] {
    return [...this.inFlight];
  }

  /** Not acknowledged (failed, expired): they stay stored for deferred upload, the window frees up. */
  giveUp(chunkNos: readonly number[]): void {
    for (const n of chunkNos) this.inFlight.delete(n);
  }
}
