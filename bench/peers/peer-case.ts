// One case through a peer broker, the same data path shape as ours: sample connector (child) -> FIFO ->
// producer (child: the agent's FIFO reader, one QoS 1 / acked publish per point, 256 in flight) -> broker
// (child, persistence on) -> consumer (child) counting what is delivered. Same payloads, rates and clock.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { CaseResult, ProcFigures } from "../../runtime/bench/agent-case.js";
import { startConnector, startIpcChild, waitForFifo, type IpcChild } from "../../runtime/bench/children.js";
import { drive, type Progress } from "../../runtime/bench/drive.js";
import type { LatencySummary } from "../../runtime/bench/latency.js";
import { ProcWatch } from "../../runtime/bench/proc-stats.js";
import type { PeerBroker } from "./broker.js";
import { startMosquitto } from "./mosquitto.js";
import { startNats } from "./nats.js";

/** What the consumer (consumer.ts) answers to {type: "stats"}. */
interface DeliveryStats {
  points: number;
  firstStampNs: number;
  lastCommitNs: number;
  latency?: LatencySummary;
}

export type PeerName = "mosquitto" | "nats";

export interface PeerCaseOptions {
  peer: PeerName;
  payload: number;
  rate: number;
  durationS: number;
  maxPoints?: number;
  latency?: boolean;
  /** Unacknowledged publishes the producer keeps (256, as the peers' usual figures are taken). */
  window?: number;
  drainTimeoutS?: number;
  onProgress?: (p: Progress) => void;
}

interface ProducerStats {
  published: number;
  acked: number;
  failed: number;
  waiting: number;
}

export async function runPeerCase(o: PeerCaseOptions): Promise<CaseResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-${o.peer}-`));
  const window = o.window ?? 256;
  let broker: PeerBroker | undefined;
  let consumer: IpcChild<unknown, DeliveryStats> | undefined;
  let producer: IpcChild<unknown, ProducerStats> | undefined;
  let connector: ReturnType<typeof startConnector> | undefined;
  try {
    broker = o.peer === "nats" ? await startNats(dir) : await startMosquitto(dir, window);
    const common = ["--peer", o.peer, "--url", broker.url];
    consumer = await startIpcChild("bench/peers/consumer.ts", [...common, ...(o.latency ? ["--latency"] : [])], `${o.peer} consumer`);
    const fifo = path.join(dir, "up.fifo");
    producer = await startIpcChild("bench/peers/producer.ts", [...common, "--fifo", fifo, "--window", String(window)], `${o.peer} producer`);
    await waitForFifo(fifo);
    const cap = o.maxPoints ?? 0;
    const count = o.rate > 0 ? Math.max(1, Math.round(o.rate * o.durationS)) : 0;
    connector = startConnector({ fifo, rate: o.rate, size: o.payload, count: cap > 0 ? (count > 0 ? Math.min(count, cap) : cap) : count });
    const watches = [
      new ProcWatch("connector", connector.child.pid!),
      new ProcWatch("producer", producer.child.pid!),
      new ProcWatch("broker", broker.child.pid!),
      new ProcWatch("consumer", consumer.child.pid!),
    ];
    const c = consumer;
    const run = await drive({
      connector,
      rate: o.rate,
      durationS: o.durationS,
      drainMs: (o.drainTimeoutS ?? Math.max(30, o.durationS * 5)) * 1000,
      pollMs: 250,
      flowing: async () => (await c.stats()).points > 0,
      onFlowing: () => watches.forEach((w) => w.begin()),
      stored: async () => (await c.stats()).points,
      onProgress: o.onProgress,
    });
    const procs: Record<string, ProcFigures | undefined> = {};
    for (const w of watches) procs[w.label] = w.end();
    const { report } = run;
    const got = await c.stats({ latency: true });
    const prod = await producer.stats();
    const notes: string[] = [];
    if (prod.failed) notes.push(`${prod.failed} publishes failed`);
    if (run.stored < report.sent) notes.push(`incomplete: ${report.sent - run.stored} of ${report.sent} points not delivered within ${run.drainMs / 1000} s`);
    const last = got.points >= report.sent ? got.lastCommitNs : run.doneAt || got.lastCommitNs;
    const seconds = Math.max(1e-9, (last - report.first_ns) / 1e9);
    const points = Math.min(run.stored, report.sent);
    return {
      path: o.peer,
      payloadB: o.payload,
      rate: o.rate,
      sent: report.sent,
      stored: points,
      seconds: +seconds.toFixed(3),
      pointsPerS: Math.round(points / seconds),
      MBPerS: +((points * o.payload) / seconds / 1e6).toFixed(2),
      latency: o.latency && got.latency ? { ...got.latency, method: "FIFO write to delivery to the consumer" } : undefined,
      procs,
      note: notes.join("; "),
    };
  } finally {
    await connector?.stop(1000).catch(() => undefined);
    await producer?.stop();
    await consumer?.stop();
    await broker?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
