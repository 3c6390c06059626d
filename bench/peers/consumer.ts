// The peers' storage side, a child process: subscribes (QoS 1 / JetStream ordered consumer) and counts what
// the broker delivers; with --latency, each message's latency from its FIFO write (the connector's --stamp,
// CLOCK_MONOTONIC like ours) to delivery, after a 1 s warm-up.
//   node --import tsx bench/peers/consumer.ts --peer mosquitto|nats --url URL [--latency]
import { parseArgs } from "node:util";
import { LatencySamples, monoNs, stampOf } from "../../runtime/bench/latency.js";
import type { PeerClient } from "./broker.js";
import { connectMosquitto } from "./mosquitto.js";
import { connectNats } from "./nats.js";

const { values } = parseArgs({ options: { peer: { type: "string" }, url: { type: "string" }, latency: { type: "boolean", default: false } } });
const client: PeerClient = values.peer === "nats" ? await connectNats(values.url!, "bench-consumer") : await connectMosquitto(values.url!, "bench-consumer");

const WARMUP_NS = 1e9;
const latency = new LatencySamples();
const stats = { points: 0, firstStampNs: 0, lastCommitNs: 0 };
await client.subscribe((payload) => {
  const now = monoNs();
  stats.points++;
  stats.lastCommitNs = now;
  const st = stampOf(payload);
  if (st === undefined) return;
  if (stats.firstStampNs === 0 || st < stats.firstStampNs) stats.firstStampNs = st;
  if (values.latency && st - stats.firstStampNs >= WARMUP_NS) latency.add((now - st) / 1e6);
});

process.send!({ type: "ready" });
process.on("message", (m: { type: string; latency?: boolean }) => {
  if (m.type === "stats") process.send!({ type: "stats", ...stats, latency: m.latency ? latency.summary() : undefined });
  if (m.type === "stop") void client.close().finally(() => process.exit(0));
});
process.on("disconnect", () => process.exit(0));
