// Reusable buffers for large, short-lived byte blocks: chunk frames, stored chunks, payloads on their way to
// a file. Node gives every buffer over 4 KiB its own memory outside V8's heap, and V8 counts that memory
// towards its next full collection: at high rates of large blocks it ran mark-compacts back to back.
// A block comes back (give) exactly once, from the one place that knows nothing reads it any more; one
// that never comes back is simply collected. Blocks not taken from the pool are ignored by give.

/** Smaller blocks come from Node's allocator as before. */
export const POOLED_MIN = 64 * 1024;
/** Larger blocks are not kept. */
const POOLED_MAX = 32 * 1024 * 1024;

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
  private idle = 0;

  /** `idleMax`: idle bytes kept at most. */
  constructor(private readonly idleMax = 32 * 1024 * 1024) {}

  /** A buffer of exactly n bytes (contents undefined). */
  take(n: number): Buffer {
    if (n < POOLED_MIN || n > POOLED_MAX) return Buffer.allocUnsafe(n);
    const cls = sizeClass(n);
    let ab = this.free.get(cls)?.pop();
    if (ab === undefined)
      ab = Buffer.allocUnsafeSlow(cls).buffer as ArrayBuffer; // its own ArrayBuffer
    else this.idle -= cls;
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

  /** Idle bytes held (tests). */
  get idleBytes(): number {
    return this.idle;
  }
}
