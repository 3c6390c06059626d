// Buffers of large received frames, reused frame after frame. A WebSocket message that spans socket reads
// is assembled into a buffer of its own, one per upstream chunk of large points. Fresh, each is memory outside
// V8's heap that V8 counts towards its next collection, so at high rates the cloud spent much of its CPU
// collecting them (the measurements are in docs/iscp.md, "Received frames").
//
// A frame's buffer goes back to the pool only when all of these hold:
// - the connection handled it as an upstream chunk within the frame's callback (`reusable`);
// - it was not relayed to downstreams, whose queues keep views of it for as long as they need (`keepFrame`);
// - every reader that keeps views of it past the callback has let go (`holdFrame`, then its release).
// Any other frame (one kept in a backlog, another message) is never reused, only collected.
import { BufferPool, POOLED_MIN } from "../wire/buffer-pool.js";

interface Lease {
  refs: number;
  reusable: boolean;
}

const pool = new BufferPool(64 * 1024 * 1024);
const leases = new WeakMap<ArrayBufferLike, Lease>();
const noop = () => {};
let reused = 0;

/** A buffer for a frame of n bytes, held once by the transport (releaseFrame after the frame's callback). */
export function takeFrame(n: number): Buffer {
  const b = pool.take(n);
  if (n >= POOLED_MIN) leases.set(b.buffer, { refs: 1, reusable: false });
  return b;
}

function drop(ab: ArrayBufferLike, l: Lease): void {
  if (--l.refs > 0) return;
  if (leases.get(ab) === l) leases.delete(ab);
  if (!l.reusable) return;
  pool.give(new Uint8Array(ab));
  reused++;
}

/** The transport's own hold, once the frame's callback returned (or threw). */
export function releaseFrame(frame: Uint8Array): void {
  const l = leases.get(frame.buffer);
  if (l) drop(frame.buffer, l);
}

/** The frame (any view of it) was handled as an upstream chunk: it may go back once nothing holds it. */
export function markReusable(view: Uint8Array): void {
  const l = leases.get(view.buffer);
  if (l) l.reusable = true;
}

/** Views of the frame live on where nobody releases them (relay queues): it never goes back. */
export function keepFrame(view: Uint8Array | undefined): void {
  const l = view && leases.get(view.buffer);
  if (l) l.reusable = false;
}

/** Keeps the frame behind `view` (if it is one) until the returned function is called; calling it again does nothing. */
export function holdFrame(view: Uint8Array | undefined): () => void {
  const ab = view?.buffer;
  const l = ab && leases.get(ab);
  if (!l) return noop;
  l.refs++;
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    drop(ab, l);
  };
}

/** Frames given back to the pool so far (tests, benchmarks). */
export function framesReused(): number {
  return reused;
}
