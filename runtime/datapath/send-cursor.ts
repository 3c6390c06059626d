// The real-time sender's view of one sequence: hands out stored chunks in order, at most `window`
// (send_queue_size) unacknowledged at a time, so a slow link backs data up in LMDB, not in memory.
import type { DurableQueue, StoredChunk } from "../queue/store.js";

export class SendCursor {
  private after = 0;
  private readonly inFlight = new Set<number>();
  /** Handed out before, their acks lost with a connection: handed out again first. */
  private retry: number[] = [];

  constructor(
    private readonly queue: DurableQueue,
    readonly seqOrd: number,
    private window: number,
  ) {}

  /** Chunks handed out and not acknowledged, counting those waiting to be handed out again. */
  get inFlightCount(): number {
    return this.inFlight.size + this.retry.length;
  }

  /** Last chunk number handed out. */
  get position(): number {
    return this.after;
  }

  setWindow(window: number): void {
    this.window = window;
  }

  /**
   * The next stored chunks (at most `limit`) that fit in the window (empty when none or the window is full).
   * `transient` (one chunk): its data is valid until the queue's next read (see DurableQueue.readChunks).
   */
  take(limit = Infinity, transient = false): StoredChunk[] {
    let room = Math.min(limit, this.window - this.inFlight.size);
    if (room <= 0) return [];
    const again: StoredChunk[] = [];
    while (room > 0 && this.retry.length > 0) {
      const n = this.retry.shift()!;
      const [c] = this.queue.readChunks(this.seqOrd, n - 1, 1, transient && limit === 1);
      if (c === undefined || c.chunkNo !== n) continue; // released meanwhile (acked late, or evicted)
      this.inFlight.add(n);
      again.push(c);
      room--;
    }
    if (room <= 0) return again;
    const chunks = this.queue.readChunks(this.seqOrd, this.after, room, transient && room === 1);
    for (const c of chunks) {
      this.inFlight.add(c.chunkNo);
      this.after = c.chunkNo;
    }
    return again.length > 0 ? again.concat(chunks) : chunks;
  }

  /** Their acks were lost with the connection: hand them out again (in order) before new chunks. */
  requeue(chunkNos: readonly number[]): void {
    for (const n of chunkNos) this.inFlight.delete(n);
    this.retry = [...new Set([...this.retry, ...chunkNos])].sort((a, b) => a - b);
  }

  /** Acknowledged by the server: released from the queue. */
  async ack(chunkNos: readonly number[]): Promise<void> {
    for (const n of chunkNos) this.inFlight.delete(n);
    if (this.retry.length > 0) this.retry = this.retry.filter((n) => !chunkNos.includes(n));
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
