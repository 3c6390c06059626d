// One case through a peer broker, the same data path shape as ours: sample connector (child) -> FIFO ->
// producer (child: the agent's FIFO reader, QoS 1 / acked publishes of one point each or of `batch` points
// packed, 256 in flight) -> broker (child, persistence on) -> consumer (child) storing what is delivered with
// the cloud's storage code and settings (sink.ts) and counting at the commit. Same payloads, rates and clock.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { CaseResult, ProcFigures } from "../../runtime/device-bench/agent-case.js";
import { startConnector, startIpcChild, waitForFifo, type IpcChild } from "../../runtime/device-bench/children.js";
import { drive, type Progress } from "../../runtime/device-bench/drive.js";
import type { LatencySummary } from "../../runtime/device-bench/latency.js";
import { ProcWatch } from "../../runtime/device-bench/proc-stats.js";
import type { Durability } from "../../cloud/database/db.js";
import type { PeerBroker } from "./broker.js";
import { startMosquitto } from "./mosquitto.js";
import { startNats } from "./nats.js";

/** What the consumer (consumer.ts) answers to {type: "stats"}. */
interface DeliveryStats {
  points: number;
  firstStampNs: number;
  lastCommitNs: number;
  failed: number;
  error: string;
  latency?: LatencySummary;
}

export type PeerName = "mosquitto" | "nats";

export interface PeerCaseOptions {
  peer: PeerName;
  payload: number;
  /** Points per message: 1 (a publish per point), or more packed by the producer (batch.ts). */
  batch?: number;
  /** The consumer's store, as the cloud's CLOUD_DURABILITY. */
  durability: Durability;
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
    const batch = o.batch ?? 1;
    const common = ["--peer", o.peer, "--url", broker.url];
    const store = path.join(dir, "store");
    fs.mkdirSync(store);
    const consumerArgs = [
      ...common,
      "--dir",
      store,
      "--durability",
      o.durability,
      ...(batch > 1 ? ["--batched"] : []),
      ...(o.latency ? ["--latency"] : []),
    ];
    consumer = await startIpcChild("bench/peers/consumer.ts", consumerArgs, `${o.peer} consumer`);
    const fifo = path.join(dir, "up.fifo");
    producer = await startIpcChild(
      "bench/peers/producer.ts",
      [...common, "--fifo", fifo, "--window", String(window), "--batch", String(batch)],
      `${o.peer} producer`,
    );
    await waitForFifo(fifo);
    const cap = o.maxPoints ?? 0;
    const count = o.rate > 0 ? Math.max(1, Math.round(o.rate * o.durationS)) : 0;
    connector = startConnector({
      fifo,
      rate: o.rate,
      size: o.payload,
      count: cap > 0 ? (count > 0 ? Math.min(count, cap) : cap) : count,
    });
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
    if (got.failed) notes.push(`${got.failed} points not stored: ${got.error}`);
    if (run.stored < report.sent)
      notes.push(
        `incomplete: ${report.sent - run.stored} of ${report.sent} points not stored by the consumer within ${run.drainMs / 1000} s`,
      );
    const last = got.points >= report.sent ? got.lastCommitNs : run.doneAt || got.lastCommitNs;
    const seconds = Math.max(1e-9, (last - report.first_ns) / 1e9);
    const points = Math.min(run.stored, report.sent);
    return {
      path: batch > 1 ? `${o.peer}/batched` : o.peer,
      payloadB: o.payload,
      rate: o.rate,
      sent: report.sent,
      stored: points,
      seconds: +seconds.toFixed(3),
      pointsPerS: Math.round(points / seconds),
      MBPerS: +((points * o.payload) / seconds / 1e6).toFixed(2),
      latency:
        o.latency && got.latency ? { ...got.latency, method: "FIFO write to the consumer's SQLite commit" } : undefined,
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
