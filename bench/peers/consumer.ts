// The peers' storage side, a child process: subscribes (QoS 1 / JetStream ordered consumer), unpacks batched
// messages, and stores each message as one chunk with the cloud's own storage code (sink.ts) in --dir; a point
// counts once its chunk committed, as ours count at the cloud's commit. With --latency, each point's latency
// from its FIFO write (the connector's --stamp, CLOCK_MONOTONIC like ours) to that commit, after a 1 s warm-up.
//   node --import tsx bench/peers/consumer.ts --peer mosquitto|nats --url URL --dir DIR [--durability D] [--batched] [--latency]
import { parseArgs } from "node:util";
import { parseDurability } from "../../cloud/config.js";
import { LatencySamples, monoNs, stampOf } from "../../runtime/bench/latency.js";
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
  },
});
const sink = await openSink(values.dir!, parseDurability(values.durability));
const client: PeerClient = values.peer === "nats" ? await connectNats(values.url!, "bench-consumer") : await connectMosquitto(values.url!, "bench-consumer");

const WARMUP_NS = 1e9;
/** Received but not committed: above this the consumer takes no more messages until half of it committed. */
const HIGH_BYTES = 64 * 1024 * 1024;
const latency = new LatencySamples();
const stats = { points: 0, messages: 0, firstStampNs: 0, lastCommitNs: 0, failed: 0, error: "" };
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
  stats.lastCommitNs = now;
  for (const p of points) {
    const st = stampOf(p);
    if (st === undefined) continue;
    if (stats.firstStampNs === 0 || st < stats.firstStampNs) stats.firstStampNs = st;
    if (values.latency && st - stats.firstStampNs >= WARMUP_NS) latency.add((now - st) / 1e6);
  }
}

await client.subscribe((payload) => {
  stats.messages++;
  // The payload is the client's own buffer for this message: views into it stay valid.
  const points = values.batched ? unpackPoints(payload) : [payload];
  pendingBytes += payload.length;
  sink.store(points, BigInt(monoNs() - t0)).then(
    () => {
      committed(points);
      settled(payload.length);
    },
    (e: Error) => {
      settled(payload.length);
      stats.failed += points.length;
      stats.error ||= e.message;
    },
  );
  if (pendingBytes < HIGH_BYTES) return;
  return new Promise<void>((resolve) => (wakeUp = resolve));
});

process.send!({ type: "ready" });
process.on("message", (m: { type: string; latency?: boolean }) => {
  if (m.type === "stats") process.send!({ type: "stats", ...stats, latency: m.latency ? latency.summary() : undefined });
  if (m.type === "stop") void client.close().then(() => sink.close()).finally(() => process.exit(0));
});
process.on("disconnect", () => process.exit(0));
