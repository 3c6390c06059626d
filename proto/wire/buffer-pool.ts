// Reusable buffers for large, short-lived byte blocks: chunk frames, stored chunks, payloads on their way to
// a file. Node gives every buffer over 4 KiB its own memory outside V8's heap, and V8 counts that memory
// towards its next full collection: at high rates of large blocks it ran mark-compacts back to back.
// A block comes back (give) exactly once, from the one place that knows nothing reads it any more; one
// that never comes back is simply collected. Blocks not taken from the pool are ignored by give.
//
// Idle blocks the traffic did not need are let go: each trim drops, per size class, as many idle blocks as
// stayed idle since the trim before (the class's low-water mark). Block sizes follow the traffic (chunk sizes
// move with the rate), so without it the idle memory crept over the size classes up to its limit and stayed:
// a process's memory rising for minutes, then held for good.

/** Smaller blocks come from Node's allocator as before. */
export const POOLED_MIN = 64 * 1024;
/** Larger blocks are not kept. */
const POOLED_MAX = 32 * 1024 * 1024;
/** How often idle blocks unused since the last trim are let go. */
const TRIM_INTERVAL_MS = 10_000;

/** The size class of n bytes: the next of 2^k, 1.25, 1.5 and 1.75 x 2^k (at most a quarter unused). */
export function sizeClass(n: number): number {
  const p = 2 ** Math.floor(Math.log2(n));
  if (p === n) return n;
  const step = p / 4;
  return p + Math.ceil((n - p) / step) * step;
}

export class BufferPool {
  private readonly free = new Map<number, ArrayBuffer[]>();
  /** Blocks handed out and not given back: only these are taken back. */
  private readonly out = new WeakSet<ArrayBuffer>();
  /** Per size class, the fewest idle blocks it had since the last trim (absent: none was taken). */
  private readonly lowWater = new Map<number, number>();
  private idle = 0;

  /** `idleMax`: idle bytes kept at most. `trimEveryMs`: 0 trims only when trim() is called. */
  constructor(
    private readonly idleMax = 32 * 1024 * 1024,
    trimEveryMs = TRIM_INTERVAL_MS,
  ) {
    // Unref'd: a pool never keeps a process alive.
    if (trimEveryMs > 0) setInterval(() => this.trim(), trimEveryMs).unref();
  }

  /** A buffer of exactly n bytes (contents undefined). */
  take(n: number): Buffer {
    if (n < POOLED_MIN || n > POOLED_MAX) return Buffer.allocUnsafe(n);
    const cls = sizeClass(n);
    const list = this.free.get(cls);
    let ab = list?.pop();
    if (ab === undefined)
      ab = Buffer.allocUnsafeSlow(cls).buffer as ArrayBuffer; // its own ArrayBuffer
    else this.idle -= cls;
    this.lowWater.set(cls, Math.min(this.lowWater.get(cls) ?? Infinity, list?.length ?? 0));
    this.out.add(ab);
    return Buffer.from(ab, 0, n);
  }

  /** Any view of a block from take(), which nothing reads any more. Anything else is ignored. */
  give(view: Uint8Array): void {
    const ab = view.buffer;
    if (!(ab instanceof ArrayBuffer) || !this.out.delete(ab)) return;
    const cls = ab.byteLength;
    if (this.idle + cls > this.idleMax) return;
    (this.free.get(cls) ?? this.free.set(cls, []).get(cls)!).push(ab);
    this.idle += cls;
  }

  /**
   * Lets go of the idle blocks no take needed since the last trim: per class its low-water mark of idle
   * blocks (all of a class nothing was taken from), the longest idle first.
   */
  trim(): void {
    for (const [cls, list] of this.free) {
      const drop = Math.min(list.length, this.lowWater.get(cls) ?? list.length);
      // give() pushes and take() pops at the end: the first ones have been idle the longest.
      list.splice(0, drop);
      this.idle -= drop * cls;
      if (list.length === 0) this.free.delete(cls);
    }
    this.lowWater.clear();
  }

  /** Idle bytes held (tests). */
  get idleBytes(): number {
    return this.idle;
  }
}
