// The many-edges bench's client side, a child process: one iSCP connection over WebSocket per edge of its
// slice (--edges-file: [{uuid, secret}]), each with one persisted upstream (QoS partial, as the agent sends)
// writing --rate points/s of --payload bytes, flushed every --flush-ms (the agent's default flush_interval is
// 5 ms). A point's latency is from the time it was due (the rate's schedule) to its chunk's ack, which the cloud
// sends after the chunk's SQLite commit. Speaks the bench children's IPC protocol (runtime/bench/children.ts):
// {type: "stats", reset: true} answers and starts a new measured window.
//   node --import tsx bench/edges-client.ts --url URL --project UUID --edges-file F --rate R [--payload 16] [--flush-ms 5]
//     [--ping-timeout 10]; {type: "prime"} sends each edge's first point, {type: "go"} starts the schedule.
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { parseArgs } from "node:util";
import { connectWebSocket } from "../proto/transport/ws/client.js";
import { QoS } from "../proto/wire/message.js";
import { monoNs } from "../runtime/bench/latency.js";
import { fetchToken } from "../runtime/deferred/cloud-auth.js";
import { IscpClient } from "../runtime/iscp/conn.js";
import type { ClientUpstream } from "../runtime/iscp/upstream.js";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    project: { type: "string" },
    "edges-file": { type: "string" },
    rate: { type: "string" },
    payload: { type: "string", default: "16" },
    "flush-ms": { type: "string", default: "5" },
    "ping-timeout": { type: "string", default: "10" },
  },
});
const url = values.url!;
const rate = Number(values.rate);
const payloadB = Math.max(16, Number(values.payload));
const flushMs = Number(values["flush-ms"]);
/**
 * How long a Ping may wait for its Pong (s). The agent's 1 s cuts a connection whenever the cloud is more
 * than a second behind on storing: it then stops reading the socket (backpressure), so the Pong waits behind
 * the chunks. The bench measures that lag as latency instead of ending the edge.
 */
const pingTimeoutS = Number(values["ping-timeout"]);
/** An edge of the slice; `url` sends it to that cloud instead of --url, `stamp` puts each point's due time in its payload. */
interface EdgeSpec {
  uuid: string;
  secret: string;
  url?: string;
  stamp?: boolean;
}
const edges = JSON.parse(fs.readFileSync(values["edges-file"]!, "utf8")) as EdgeSpec[];
const DATA_ID = { name: "bench/edge", type: "bytes" };
/** Connections set up at once (token, WebSocket, iSCP connect, upstream open). */
const CONNECT_CONCURRENCY = 16;

interface Edge {
  client: IscpClient;
  stamp: boolean;
  /** Set when its connection or upstream ended: the edge sends no more (counted once as an error). */
  dead: boolean;
  up: ClientUpstream;
  sent: number;
  /** Whether a chunk of this edge was acked yet (its measurement exists in the cloud). */
  firstAcked: boolean;
  /** Per chunk sequence number: the index of its first point and how many it holds. */
  chunks: Map<number, [number, number]>;
}

const stats = { connected: 0, firstAcked: 0, deadUpstreams: 0, connectErrors: 0, connectS: 0, sent: 0, acked: 0, ackErrors: 0, stateChanges: 0, firstError: "" };
/** Latency samples (ms) of the measured window, handed to the parent whole so it can merge the clients'. */
let samples = new Float32Array(1 << 16);
let nSamples = 0;
function addSample(ms: number): void {
  if (nSamples === samples.length) {
    const grown = new Float32Array(samples.length * 2);
    grown.set(samples);
    samples = grown;
  }
  samples[nSamples++] = ms;
}
const note = (e: unknown) => (stats.firstError ||= (e as Error).message ?? String(e));
/** When every edge's schedule started (set once all are connected): point k of an edge is due at startNs + k/rate. */
let startNs = 0;
const dueAt = (k: number) => startNs + (k * 1e9) / rate;

async function open(e0: EdgeSpec): Promise<Edge> {
  const at = e0.url ?? url;
  const token = await fetchToken({ server_url: at, project_uuid: values.project!, edge_uuid: e0.uuid, client_secret: e0.secret });
  const client = await IscpClient.connect({
    transport: () => connectWebSocket({ url: `${at.replace(/^http/, "ws")}/api/iscp/connect` }),
    token: token.accessToken,
    nodeId: e0.uuid,
    projectUuid: values.project!,
    reconnect: false,
    pingTimeoutSec: pingTimeoutS,
  });
  const up = await client.openUpstream({ sessionId: randomUUID(), qos: QoS.PARTIAL, persist: true });
  const edge: Edge = { client, stamp: !!e0.stamp, dead: false, firstAcked: false, up, sent: 0, chunks: new Map() };
  client.onStateChange((s, why) => {
    if (s === "closed" && stopping) return;
    stats.stateChanges++;
    if (s === "closed") edge.dead = true;
    const e = new Error(`edge ${e0.uuid}: connection ${s}${why ? `: ${why}` : ""}`);
    if (stats.stateChanges <= 3) process.stderr.write(`edges client: ${e.message}\n`);
    note(e);
  });
  up.onAck((results) => {
    const now = monoNs();
    for (const r of results) {
      const c = edge.chunks.get(r.sequenceNumber);
      edge.chunks.delete(r.sequenceNumber);
      if (r.resultCode !== 0) {
        stats.ackErrors++;
        note(new Error(`chunk refused: ${r.resultString} (${r.resultCode})`));
        continue;
      }
      if (!c) continue;
      if (!edge.firstAcked) {
        edge.firstAcked = true;
        stats.firstAcked++;
      }
      stats.acked += c[1];
      for (let k = c[0]; k < c[0] + c[1]; k++) addSample((now - dueAt(k)) / 1e6);
    }
  });
  return edge;
}

const live: Edge[] = [];
let stopping = false;
const started = monoNs();
for (let i = 0; i < edges.length; i += CONNECT_CONCURRENCY) {
  const got = await Promise.allSettled(edges.slice(i, i + CONNECT_CONCURRENCY).map(open));
  for (const g of got) {
    if (g.status === "fulfilled") live.push(g.value);
    else {
      stats.connectErrors++;
      note(g.reason);
    }
  }
}
stats.connected = live.length;
stats.connectS = +((monoNs() - started) / 1e9).toFixed(2);

// Every edge's schedule starts at the parent's "go" (once all clients are connected, so that no client's
// connection storm meets another's traffic); each flush sends the points that fell due since the last one (the
// chunk is encoded at flush, so all points may share one payload buffer, except stamped ones).
const payload = Buffer.alloc(payloadB, 0x5a);
/** A payload carrying point k's sequence number and due time (u64 BE each, as the sample connector's --stamp). */
function stamped(k: number): Buffer {
  const b = Buffer.alloc(payloadB, 0x5a);
  b.writeBigUInt64BE(BigInt(k), 0);
  b.writeBigUInt64BE(BigInt(Math.round(dueAt(k))), 8);
  return b;
}
let timer: NodeJS.Timeout | undefined;
const go = () => (timer ??= setInterval(tick, flushMs));
function tick(): void {
  const due = Math.floor(((monoNs() - startNs) / 1e9) * rate);
  for (const e of live) {
    if (e.dead || e.sent >= due) continue;
    const pts = [];
    for (let k = e.sent; k < due; k++) pts.push({ elapsedTime: Math.round((k * 1e9) / rate), payload: e.stamp ? stamped(k) : payload });
    try {
      e.up.write(DATA_ID, pts);
      e.chunks.set(e.up.flush(), [e.sent, due - e.sent]);
    } catch (err) {
      // The upstream ended (its connection closed: the reason is noted by onStateChange): an error, not a crash.
      e.dead = true;
      stats.deadUpstreams++;
      note(err);
      continue;
    }
    stats.sent += due - e.sent;
    e.sent = due;
  }
}

process.send!({ type: "ready", connected: stats.connected, connectErrors: stats.connectErrors });
process.on("message", (m: { type: string; reset?: boolean }) => {
  if (m.type === "prime") {
    // One point per edge ahead of the schedule: its ack says the edge's measurement exists in the cloud.
    for (const e of live) {
      e.up.write(DATA_ID, [{ elapsedTime: 0, payload: e.stamp ? stamped(0) : payload }]);
      e.chunks.set(e.up.flush(), [0, 1]);
      e.sent = 1;
    }
  }
  if (m.type === "go") {
    startNs = monoNs();
    go();
  }
  if (m.type === "stats") {
    const latency = Buffer.from(samples.buffer, 0, nSamples * 4).toString("base64");
    process.send!({ type: "stats", ...stats, unacked: live.reduce((n, e) => n + e.chunks.size, 0), latency });
    if (m.reset) {
      nSamples = 0;
      stats.acked = 0;
      stats.sent = 0;
    }
  }
  if (m.type === "stop") {
    stopping = true;
    clearInterval(timer);
    void Promise.allSettled(live.map((e) => e.client.close())).finally(() => process.exit(0));
  }
});
process.on("disconnect", () => process.exit(0));
