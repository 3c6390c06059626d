// The peers' storage side, a child process: subscribes (QoS 1 / JetStream ordered consumer), unpacks batched
// messages, groups the points into chunks as our agent does, and stores them with the cloud's own storage code
// (sink.ts) in --dir; a point counts once its chunk committed, as ours count at the cloud's commit. With
// --latency, each point's latency from its FIFO write (the connector's --stamp, CLOCK_MONOTONIC like ours) to
// that commit, after a warm-up (--warmup-s). {type: "stats", reset: true} also starts a new measured window: the answer's
// `window` counts the points committed since the last reset, and the latency is that window's (bench/edges.ts).
//   node --import tsx bench/peers/consumer.ts --peer mosquitto|nats --url URL --dir DIR [--durability D] [--batched] [--latency]
//     [--warmup-s 1]
import { parseArgs } from "node:util";
import { parseDurability } from "../../cloud/config.js";
import { LatencySamples, monoNs, stampOf } from "../../runtime/device-bench/latency.js";
import { CHUNK_MAX_BYTES, CHUNK_MAX_POINTS } from "../../runtime/datapath/chunk-batcher.js";
import { unpackPoints } from "./batch.js";
import type { PeerClient } from "./broker.js";
import { connectMosquitto } from "./mosquitto.js";
import { connectNats } from "./nats.js";
import { openSink } from "./sink.js";

const { values } = parseArgs({
  options: {
    peer: { type: "string" },
    url: { type: "string" },
    dir: { type: "string" },
    durability: { type: "string" },
    batched: { type: "boolean", default: false },
    latency: { type: "boolean", default: false },
    "warmup-s": { type: "string", default: "1" },
  },
});
const sink = await openSink(values.dir!, parseDurability(values.durability));
const client: PeerClient =
  values.peer === "nats"
    ? await connectNats(values.url!, "bench-consumer")
    : await connectMosquitto(values.url!, "bench-consumer");

/** Points stamped this soon after the first are left out of the latency (the edges bench measures a window instead: 0). */
const WARMUP_NS = Number(values["warmup-s"]) * 1e9;
/** Received but not committed: above this the consumer takes no more messages until half of it committed. */
const HIGH_BYTES = 64 * 1024 * 1024;
let latency = new LatencySamples();
const stats = { points: 0, window: 0, messages: 0, firstStampNs: 0, lastCommitNs: 0, failed: 0, error: "" };
const t0 = monoNs();
let pendingBytes = 0;
let wakeUp: (() => void) | undefined;

function settled(bytes: number): void {
  pendingBytes -= bytes;
  if (wakeUp && pendingBytes < HIGH_BYTES / 2) {
    wakeUp();
    wakeUp = undefined;
  }
}

function committed(points: readonly Uint8Array[]): void {
  const now = monoNs();
  stats.points += points.length;
  stats.window += points.length;
  stats.lastCommitNs = now;
  for (const p of points) {
    const st = stampOf(p);
    if (st === undefined) continue;
    if (stats.firstStampNs === 0 || st < stats.firstStampNs) stats.firstStampNs = st;
    if (values.latency && st - stats.firstStampNs >= WARMUP_NS) latency.add((now - st) / 1e6);
  }
}

/**
 * Received points are grouped into chunks as our agent groups them (up to its chunk's limits), so that every path
 * pays the same storage cost per point and the variants differ only in how they use the broker: a chunk is
 * sealed when it is full, or at the end of an event turn while fewer than STORING chunks await their commit
 * (what arrives during a commit joins the next chunk, as the cloud's group commit does with our chunks).
 */
const STORING = 2;
let chunk: Uint8Array[] = [];
let chunkBytes = 0;
let storing = 0;
let sealQueued = false;

function seal(): void {
  if (chunk.length === 0) return;
  const points = chunk;
  const bytes = chunkBytes;
  chunk = [];
  chunkBytes = 0;
  storing++;
  sink
    .store(points, BigInt(monoNs() - t0))
    .then(
      () => committed(points),
      (e: Error) => {
        stats.failed += points.length;
        stats.error ||= e.message;
      },
    )
    .finally(() => {
      storing--;
      settled(bytes);
      if (storing < STORING) seal();
    });
}

function add(points: readonly Uint8Array[]): void {
  for (const p of points) {
    chunk.push(p);
    chunkBytes += p.length;
    pendingBytes += p.length;
    if (chunk.length >= CHUNK_MAX_POINTS || chunkBytes >= CHUNK_MAX_BYTES) seal();
  }
  if (!sealQueued) {
    sealQueued = true;
    setImmediate(() => {
      sealQueued = false;
      if (storing < STORING) seal();
    });
  }
}

await client.subscribe((payload) => {
  stats.messages++;
  // The payload is the client's own buffer for this message: views into it stay valid.
  add(values.batched ? unpackPoints(payload) : [payload]);
  if (pendingBytes < HIGH_BYTES) return;
  return new Promise<void>((resolve) => (wakeUp = resolve));
});

process.send!({ type: "ready" });
process.on("message", (m: { type: string; latency?: boolean; reset?: boolean }) => {
  if (m.type === "stats")
    process.send!({ type: "stats", ...stats, latency: m.latency ? latency.summary() : undefined });
  if (m.type === "stats" && m.reset) {
    latency = new LatencySamples();
    stats.window = 0;
  }
  if (m.type === "stop")
    void client
      .close()
      .then(() => sink.close())
      .finally(() => process.exit(0));
});
process.on("disconnect", () => process.exit(0));
