// The systems the many-edges bench loads, each started fresh in a temp dir: ours (one cloud peer), mosquitto
// (the broker and one consumer committing to SQLite), NATS JetStream (file store) and the minimal Node receiver.
// Each says which processes are the system (their CPU is its cost; the load generators are apart) and where
// its points are counted.
import fs from "node:fs";
import path from "node:path";
import { parseDurability } from "../cloud/config.js";
import { startIpcChild, type IpcChild } from "../runtime/device-bench/children.js";
import { startCloudPeer } from "../runtime/device-bench/cloud-peer.js";
import type { LatencySummary } from "../runtime/device-bench/latency.js";
import { countsAt, oursCountsAt } from "./agent-table.js";
import type { System } from "./edges-senders.js";
import { makeEdges, type EdgeSpec, type EdgesTarget } from "./edges-load.js";
import type { PeerBroker } from "./peers/broker.js";
import { startMosquitto } from "./peers/mosquitto.js";
import { startNats } from "./peers/nats.js";

export interface SystemUnderTest {
  system: System;
  target: EdgesTarget;
  edges: EdgeSpec[];
  /** The processes that make up the system, by name: their CPU and RSS are its cost. */
  processes: Array<{ name: string; pid: number }>;
  /** Where a point is counted as acknowledged (the row's counts_at). */
  countsAt: string;
  /** Seconds it took to make the edges (ours: through the cloud's REST API). */
  setupS: number;
  /**
   * When the system counts its points itself (mosquitto: at the consumer's commit, not the PUBACK): its window
   * starts with begin() and end() gives the points and latency that replace the clients' acknowledgments.
   */
  counter?: { begin(): Promise<void>; end(): Promise<{ points: number; latency: LatencySummary; total: number }> };
  stop(): Promise<void>;
}

/** Messages the mosquitto broker keeps in flight to the consumer. */
const MQTT_WINDOW = 1000;

/** What each system's row says in counts_at; the table's legend says it in words. */
export const COUNTS_AT_LEGEND: Record<System, string> = {
  ours: "the edge, at its chunk's iSCP ack, which the cloud sends once its ingest journal holds the chunk (after its SQLite commit with CLOUD_INGEST_JOURNAL=off)",
  mosquitto:
    "the consumer, at its SQLite commit of the point (cloud storage code); the PUBACK before it is from memory",
  nats: "the edge, at the JetStream PubAck: written to the stream's file, not fsynced (the server syncs every 2 min)",
  node: "the edge, at the frame's ack, sent after the fdatasync of the file the frame was appended to",
};

const anonymousEdges = (n: number): EdgeSpec[] =>
  Array.from({ length: n }, (_, i) => ({ uuid: `bench-edge-${i}`, secret: "" }));

export async function startSystem(system: System, dir: string, edgeCount: number): Promise<SystemUnderTest> {
  const durability = parseDurability(process.env.CLOUD_DURABILITY);
  if (system === "ours") {
    // Every edge of the fleet connects from 127.0.0.1: the per-address cap (2048 by default) would refuse the
    // 3,000-edge load, which in a real fleet comes from as many addresses.
    const env = { CLOUD_MAX_CONNECTIONS_PER_ADDRESS: "0" };
    const cloud = await startCloudPeer(path.join(dir, "cloud"), { quic: false, env });
    try {
      const t0 = Date.now();
      const edges = await makeEdges(cloud.info, edgeCount);
      const setupS = +((Date.now() - t0) / 1000).toFixed(2);
      const countsAtOurs = `ack after ${oursCountsAt(durability, 0)}`;
      return {
        system,
        target: cloud.info,
        edges,
        processes: [{ name: "cloud", pid: cloud.child.pid! }],
        countsAt: countsAtOurs,
        setupS,
        stop: () => cloud.stop(),
      };
    } catch (e) {
      await cloud.stop();
      throw e;
    }
  }
  if (system === "node") {
    const receiver = await startIpcChild<{ port: number }, unknown>(
      "bench/edges-receiver.ts",
      ["--dir", dir],
      "node receiver",
    );
    const target = { url: `ws://127.0.0.1:${receiver.ready.port}`, token: "", projectUuid: "" };
    return {
      system,
      target,
      edges: anonymousEdges(edgeCount),
      processes: [{ name: "receiver", pid: receiver.child.pid! }],
      countsAt: "ack after fdatasync",
      setupS: 0,
      stop: () => receiver.stop(),
    };
  }
  if (system === "nats") {
    const broker = await startNats(dir);
    const target = { url: broker.url, token: "", projectUuid: "" };
    return {
      system,
      target,
      edges: anonymousEdges(edgeCount),
      processes: [{ name: "nats-server", pid: broker.child.pid! }],
      countsAt: "jetstream PubAck",
      setupS: 0,
      stop: () => broker.stop(),
    };
  }
  return startMosquittoSystem(dir, edgeCount, durability);
}

interface ConsumerStats {
  points: number;
  window: number;
  failed: number;
  error: string;
  latency?: LatencySummary;
}

async function startMosquittoSystem(
  dir: string,
  edgeCount: number,
  durability: ReturnType<typeof parseDurability>,
): Promise<SystemUnderTest> {
  let broker: PeerBroker | undefined;
  let consumer: IpcChild<unknown, ConsumerStats> | undefined;
  const stop = async () => {
    await consumer?.stop();
    await broker?.stop();
  };
  try {
    broker = await startMosquitto(dir, MQTT_WINDOW);
    const store = path.join(dir, "store");
    fs.mkdirSync(store);
    consumer = await startIpcChild(
      "bench/peers/consumer.ts",
      [
        "--peer",
        "mosquitto",
        "--url",
        broker.url,
        "--dir",
        store,
        "--durability",
        durability,
        "--latency",
        "--warmup-s",
        "0",
      ],
      "mosquitto consumer",
    );
    const c = consumer;
    const target = { url: broker.url, token: "", projectUuid: "" };
    return {
      system: "mosquitto",
      target,
      edges: anonymousEdges(edgeCount),
      processes: [
        { name: "mosquitto", pid: broker.child.pid! },
        { name: "consumer", pid: consumer.child.pid! },
      ],
      countsAt: `consumer ${countsAt(durability, 0)}`,
      setupS: 0,
      counter: {
        begin: async () => void (await c.stats({ reset: true })),
        end: async () => {
          const s = await c.stats({ latency: true });
          if (s.failed) throw new Error(`the consumer failed to store ${s.failed} points: ${s.error}`);
          return { points: s.window, latency: s.latency!, total: s.points };
        },
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
