// The peers' batched variant: the producer packs as many points into one message as our agent puts into one
// chunk at that payload size, and the consumer unpacks them. A message is the points one after another, each
// as its length (u32 little-endian) and its bytes: as small a frame as a byte stream of points can have.
import { ChunkBuilder } from "../../runtime/queue/chunk-codec.js";
import { CHUNK_MAX_BYTES, CHUNK_MAX_POINTS } from "../../runtime/queue/batcher.js";

const LEN = 4;

/** One message holding `points` (views or copies: the bytes are copied in). */
export function packPoints(points: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of points) size += LEN + p.length;
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  for (const p of points) {
    out.writeUInt32LE(p.length, o);
    out.set(p, o + LEN);
    o += LEN + p.length;
  }
  return out;
}

/** The points of a message packPoints made (views into `msg`); throws on a truncated or corrupt message. */
export function unpackPoints(msg: Uint8Array): Uint8Array[] {
  const view = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
  const out: Uint8Array[] = [];
  for (let o = 0; o < msg.length; ) {
    if (o + LEN > msg.length) throw new Error(`batched message cut at byte ${o} of ${msg.length}`);
    const n = view.getUint32(o, true);
    o += LEN;
    if (o + n > msg.length) throw new Error(`batched point of ${n} bytes at byte ${o} runs past the message (${msg.length} bytes)`);
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
  const point = { name: "sample/counter", type: "bytes", payload: new Uint8Array(payload), elapsedNs: 1_000_000_000, srcId: "bench" };
  while (b.count < CHUNK_MAX_POINTS && b.size < CHUNK_MAX_BYTES) b.add(point);
  const n = b.count;
  b.reset();
  return n;
}
