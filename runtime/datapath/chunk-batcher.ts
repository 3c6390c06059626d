// Groups accepted points into chunks of one sequence per the upstream's flush policy and appends them to
// the durable queue. A chunk here is the unit the real-time sender sends and the server acknowledges.
//   interval:    a chunk every flush_interval ms (or earlier when it reaches maxPoints / maxBytes)
//   immediately: a chunk per push (per FIFO read batch), no waiting
// push() resolves when every point it carried is durable: only then are the points accepted.
import type { DataPoint } from "../datapoint.js";
import { ChunkBuilder } from "../queue/chunk-codec.js";
import { CHUNK_HEADER, type DurableQueue } from "../queue/store.js";

/** A chunk's limits unless told otherwise: it is flushed when it reaches either. */
export const CHUNK_MAX_POINTS = 8192;
export const CHUNK_MAX_BYTES = 1024 * 1024;

export interface BatcherOptions {
  flushPolicy: "interval" | "immediately";
  /** Milliseconds (flush_interval). */
  flushIntervalMs: number;
  maxPoints?: number;
  maxBytes?: number;
  /** A chunk was appended (its commit runs): the sender may send it now (the queue reads it before the commit). */
  onAppended?: (seqOrd: number, chunkNo: number) => void;
  /** A chunk became durable: its points are accepted. */
  onDurable?: (seqOrd: number, chunkNo: number, points: number) => void;
}

interface Open {
  done: Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class ChunkBatcher {
  private cur: Open | undefined;
  /** Points are encoded as they come: nothing per point stays alive until the flush. */
  private readonly builder = new ChunkBuilder();
  private timer: NodeJS.Timeout | undefined;
  private readonly maxPoints: number;
  private readonly maxBytes: number;

  constructor(
    private readonly queue: DurableQueue,
    private seqOrd: number,
    private readonly opts: BatcherOptions,
  ) {
    this.maxPoints = opts.maxPoints ?? CHUNK_MAX_POINTS;
    this.maxBytes = opts.maxBytes ?? CHUNK_MAX_BYTES;
  }

  get sequence(): number {
    return this.seqOrd;
  }

  push(points: readonly DataPoint[]): Promise<void> {
    const waits: Promise<void>[] = [];
    const b = this.builder;
    for (const p of points) {
      this.cur ??= this.openBatch();
      b.add(p);
      if (b.count >= this.maxPoints || b.size >= this.maxBytes) waits.push(this.flushNow());
    }
    if (this.cur !== undefined) {
      waits.push(this.cur.done);
      if (this.opts.flushPolicy === "immediately") this.flushNow();
      else this.timer ??= setTimeout(() => void this.flushNow(), this.opts.flushIntervalMs);
    }
    return waits.length === 1 ? waits[0]! : Promise.all(waits).then(() => undefined);
  }

  /** Appends what is batched now; resolves when durable. */
  flush(): Promise<void> {
    return this.flushNow();
  }

  /** Flushes into the current sequence, then continues in another one (the sender reopened its stream). */
  async switchSequence(seqOrd: number): Promise<void> {
    const f = this.flushNow();
    this.seqOrd = seqOrd;
    await f;
  }

  private openBatch(): Open {
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => {}); // rejections reach the pushers through their own awaits
    return { done, resolve, reject };
  }

  private flushNow(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const c = this.cur;
    this.cur = undefined;
    if (c === undefined) return Promise.resolve();
    const seqOrd = this.seqOrd;
    const n = this.builder.count;
    try {
      const { chunkNo, durable } = this.queue.appendEncoded(seqOrd, this.builder.finish(CHUNK_HEADER), n);
      this.opts.onAppended?.(seqOrd, chunkNo);
      durable.then(
        () => {
          c.resolve();
          this.opts.onDurable?.(seqOrd, chunkNo, n);
        },
        (e: unknown) => c.reject(e),
      );
    } catch (e) {
      this.builder.reset();
      c.reject(e);
    }
    return c.done;
  }
}
