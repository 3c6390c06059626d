// The peers' batched variant: the producer packs as many points into one message as our agent puts into one
// chunk at that payload size, and the consumer unpacks them. A message is the points one after another, each
// as its length (u32 little-endian) and its bytes: as small a frame as a byte stream of points can have.
import { ChunkBuilder } from "../../runtime/queue/chunk-codec.js";
import { CHUNK_MAX_BYTES, CHUNK_MAX_POINTS } from "../../runtime/datapath/chunk-batcher.js";

const LEN = 4;

/**
 * Packs points into messages of at most `maxPoints` points as they come: each point's bytes are copied once,
 * straight into the message being built (a FIFO read's payloads are views into reused buffers).
 */
export class Packer {
  private buf: Buffer = Buffer.alloc(0);
  private off = 0;
  /** Points in the message being built. */
  count = 0;

  constructor(readonly maxPoints: number) {
    if (!(Number.isInteger(maxPoints) && maxPoints >= 1))
      throw new Error(`points per message must be a whole number, at least 1, not ${maxPoints}`);
  }

  /** Adds a point; returns the message when it is full. */
  add(payload: Uint8Array): Uint8Array | undefined {
    const need = this.off + LEN + payload.length;
    if (need > this.buf.length) {
      // The first point sizes the message for maxPoints like it; a larger one grows it.
      const grown = Buffer.allocUnsafe(
        Math.max(need, this.count === 0 ? this.maxPoints * (LEN + payload.length) : 2 * this.buf.length),
      );
      this.buf.copy(grown, 0, 0, this.off);
      this.buf = grown;
    }
    this.buf.writeUInt32LE(payload.length, this.off);
    this.buf.set(payload, this.off + LEN);
    this.off = need;
    return ++this.count >= this.maxPoints ? this.flush() : undefined;
  }

  /** The message built so far (undefined when empty); the next point starts a new one. */
  flush(): Uint8Array | undefined {
    if (this.count === 0) return undefined;
    const msg = this.buf.subarray(0, this.off);
    this.buf = this.buf.subarray(this.off); // what is left of the allocation goes to the next message
    this.off = 0;
    this.count = 0;
    return msg;
  }
}

/** One message holding `points` (the bytes are copied in). */
export function packPoints(points: readonly Uint8Array[]): Uint8Array {
  const p = new Packer(points.length + 1);
  for (const x of points) p.add(x);
  return p.flush() ?? new Uint8Array(0);
}

/** The points of a message packPoints made (views into `msg`); throws on a truncated or corrupt message. */
export function unpackPoints(msg: Uint8Array): Uint8Array[] {
  const view = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
  const out: Uint8Array[] = [];
  for (let o = 0; o < msg.length; ) {
    if (o + LEN > msg.length) throw new Error(`batched message cut at byte ${o} of ${msg.length}`);
    const n = view.getUint32(o, true);
    o += LEN;
    if (o + n > msg.length)
      throw new Error(`batched point of ${n} bytes at byte ${o} runs past the message (${msg.length} bytes)`);
    out.push(msg.subarray(o, o + n));
    o += n;
  }
  return out;
}

/**
 * How many points of `payload` bytes our agent's chunk batcher puts into one full chunk (its limits:
 * CHUNK_MAX_POINTS points or CHUNK_MAX_BYTES encoded bytes, whichever comes first), found by building one.
 */
export function pointsPerChunk(payload: number): number {
  const b = new ChunkBuilder();
  const point = {
    name: "sample/counter",
    type: "bytes",
    payload: new Uint8Array(payload),
    elapsedNs: 1_000_000_000,
    srcId: "bench",
  };
  while (b.count < CHUNK_MAX_POINTS && b.size < CHUNK_MAX_BYTES) b.add(point);
  const n = b.count;
  b.reset();
  return n;
}
