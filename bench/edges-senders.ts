// How one edge of the many-edges bench sends, per system: ours (an iSCP connection over WebSocket with one
// persisted upstream, a chunk per flush), mosquitto (an MQTT connection, one QoS 1 publish per point), NATS
// (a connection publishing one point per JetStream message, acked by a PubAck) and the minimal Node receiver
// (a WebSocket, one binary frame per flush: a u32 sequence number and the points as batch.ts packs them).
// Each reports the points an acknowledgment covers; what an acknowledgment means differs (docs/datapath.md).
import { randomUUID } from "node:crypto";
import mqtt from "mqtt";
import { connect as natsConnect } from "nats";
import WebSocket from "ws";
import { connectWebSocket } from "../proto/transport/ws/client.js";
import { QoS } from "../proto/wire/message.js";
import { fetchToken } from "../runtime/deferred/cloud-auth.js";
import { IscpClient } from "../runtime/iscp/iscp-client.js";
import { packPoints } from "./peers/batch.js";
import { MQTT_TOPIC } from "./peers/mosquitto.js";
import { NATS_SUBJECT } from "./peers/nats.js";

export const SYSTEMS = ["ours", "mosquitto", "nats", "node"] as const;
export type System = (typeof SYSTEMS)[number];

export interface SenderHooks {
  /** Points [first, first + n) were acknowledged, or refused with a reason. */
  acked(first: number, n: number, refused?: string): void;
  /** The connection ended (also at the bench's own stop: the caller tells them apart). */
  closed(reason: string): void;
}

export interface Sender {
  /** Sends points [first, first + n) with their elapsed times (ns); throws when the connection is gone. */
  send(first: number, payloads: Uint8Array[], elapsedNs: (k: number) => number): void;
  /** Sends still awaiting their acknowledgment. */
  readonly unacked: number;
  close(): Promise<void>;
}

export interface SenderOptions {
  url: string;
  /** ours: the edge's project, UUID and secret (it signs in like the agent). */
  project: string;
  uuid: string;
  secret: string;
  pingTimeoutS: number;
}

const DATA_ID = { name: "bench/edge", type: "bytes" };
/** How long a peer's acknowledgment may take before it counts as an error: past any window, so lag shows as latency. */
const PEER_ACK_TIMEOUT_MS = 60_000;

export function openSender(system: System, o: SenderOptions, hooks: SenderHooks): Promise<Sender> {
  if (system === "ours") return openIscp(o, hooks);
  if (system === "mosquitto") return openMqtt(o, hooks);
  if (system === "nats") return openNats(o, hooks);
  return openWs(o, hooks);
}

async function openIscp(o: SenderOptions, hooks: SenderHooks): Promise<Sender> {
  const token = await fetchToken({
    server_url: o.url,
    project_uuid: o.project,
    edge_uuid: o.uuid,
    client_secret: o.secret,
  });
  const client = await IscpClient.connect({
    transport: () => connectWebSocket({ url: `${o.url.replace(/^http/, "ws")}/api/iscp/connect` }),
    token: token.accessToken,
    nodeId: o.uuid,
    projectUuid: o.project,
    reconnect: false,
    pingTimeoutSec: o.pingTimeoutS,
  });
  const up = await client.openUpstream({ sessionId: randomUUID(), qos: QoS.PARTIAL, persist: true });
  /** Per chunk sequence number: its first point and how many it holds. */
  const chunks = new Map<number, [number, number]>();
  client.onStateChange((s, why) => s === "closed" && hooks.closed(`connection ${s}${why ? `: ${why}` : ""}`));
  up.onAck((results) => {
    for (const r of results) {
      const c = chunks.get(r.sequenceNumber);
      chunks.delete(r.sequenceNumber);
      if (c)
        hooks.acked(c[0], c[1], r.resultCode !== 0 ? `chunk refused: ${r.resultString} (${r.resultCode})` : undefined);
    }
  });
  return {
    send(first, payloads, elapsedNs) {
      up.write(
        DATA_ID,
        payloads.map((payload, i) => ({ elapsedTime: elapsedNs(first + i), payload })),
      );
      chunks.set(up.flush(), [first, payloads.length]);
    },
    get unacked() {
      return chunks.size;
    },
    close: () => client.close(),
  };
}

async function openMqtt(o: SenderOptions, hooks: SenderHooks): Promise<Sender> {
  const client = await mqtt.connectAsync(o.url, {
    clientId: o.uuid,
    clean: true,
    reconnectPeriod: 0,
    protocolVersion: 4,
  });
  client.on("close", () => hooks.closed("MQTT connection closed"));
  let unacked = 0;
  return {
    send(first, payloads) {
      if (!client.connected) throw new Error("MQTT connection closed");
      payloads.forEach((p, i) => {
        unacked++;
        client.publish(MQTT_TOPIC, Buffer.from(p.buffer, p.byteOffset, p.byteLength), { qos: 1 }, (err) => {
          unacked--;
          hooks.acked(first + i, 1, err ? `publish failed: ${err.message}` : undefined);
        });
      });
    },
    get unacked() {
      return unacked;
    },
    close: () => client.endAsync(),
  };
}

async function openNats(o: SenderOptions, hooks: SenderHooks): Promise<Sender> {
  const nc = await natsConnect({ servers: o.url, name: o.uuid });
  void nc.closed().then((e) => hooks.closed(`NATS connection closed${e ? `: ${e.message}` : ""}`));
  const js = nc.jetstream({ timeout: PEER_ACK_TIMEOUT_MS });
  let unacked = 0;
  return {
    send(first, payloads) {
      if (nc.isClosed()) throw new Error("NATS connection closed");
      payloads.forEach((p, i) => {
        unacked++;
        js.publish(NATS_SUBJECT, p).then(
          () => (unacked--, hooks.acked(first + i, 1)),
          (e: Error) => (unacked--, hooks.acked(first + i, 1, `publish failed: ${e.message}`)),
        );
      });
    },
    get unacked() {
      return unacked;
    },
    close: () => nc.close(),
  };
}

async function openWs(o: SenderOptions, hooks: SenderHooks): Promise<Sender> {
  const ws = new WebSocket(o.url, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  ws.on("error", () => {}); // the close that follows reports it
  ws.on("close", (code) => hooks.closed(`websocket closed ${code}`));
  const frames = new Map<number, [number, number]>();
  let seq = 0;
  ws.on("message", (data: Buffer) => {
    const s = data.readUInt32BE(0);
    const f = frames.get(s);
    frames.delete(s);
    if (f) hooks.acked(f[0], f[1]);
  });
  return {
    send(first, payloads) {
      if (ws.readyState !== WebSocket.OPEN) throw new Error("websocket closed");
      const head = Buffer.alloc(4);
      head.writeUInt32BE(++seq);
      frames.set(seq, [first, payloads.length]);
      ws.send(Buffer.concat([head, packPoints(payloads)]));
    },
    get unacked() {
      return frames.size;
    },
    close: async () => {
      ws.close();
      await new Promise<void>((r) => (ws.readyState === WebSocket.CLOSED ? r() : ws.once("close", () => r())));
    },
  };
}
