// The many-edges bench's load generator, a child process: one connection per edge of its slice (--edges-file:
// [{uuid, secret, url?, stamp?}]) to the --system under test (edges-senders.ts), each writing --rate points/s
// of --payload bytes, flushed every --flush-ms (the agent's default flush_interval is 5 ms): ours and the
// Node receiver send the points of a flush as one chunk or frame, mosquitto and NATS one message per point.
// A point's latency is from the time it was due (the rate's schedule) to its acknowledgment. Speaks the bench
// children's IPC protocol (runtime/device-bench/children.ts): {type: "stats", reset: true} answers and starts a new
// measured window; {type: "prime"} sends each edge's first point, {type: "go"} starts the schedule.
//   node --import tsx bench/edges-client.ts --system ours|mosquitto|nats|node --url URL --edges-file F --rate R
//     [--project UUID] [--payload 16] [--flush-ms 5] [--ping-timeout 1]; each edge keeps at most 4,096 chunks or
//     frames, or 256 messages, unacknowledged.
import fs from "node:fs";
import { parseArgs } from "node:util";
import { monoNs } from "../runtime/device-bench/latency.js";
import { openSender, SYSTEMS, type Sender, type System } from "./edges-senders.js";
import { pointsDue } from "./edges-schedule.js";

const { values } = parseArgs({
  options: {
    system: { type: "string", default: "ours" },
    url: { type: "string" },
    project: { type: "string", default: "" },
    "edges-file": { type: "string" },
    rate: { type: "string" },
    payload: { type: "string", default: "16" },
    "flush-ms": { type: "string", default: "5" },
    "ping-timeout": { type: "string", default: "1" },
  },
});
const system = values.system as System;
if (!SYSTEMS.includes(system)) throw new Error(`--system: one of ${SYSTEMS.join(", ")}, not ${values.system}`);
const rate = Number(values.rate);
const payloadB = Math.max(16, Number(values.payload));
const flushMs = Number(values["flush-ms"]);
/**
 * How long a Ping may wait for its Pong (s), ours only. The agent's own is 1 s; a cloud that is behind on
 * storing stops reading the socket (backpressure), so a Pong queued behind chunks would cut the edge: the
 * bench waits longer and shows that lag as latency.
 */
const pingTimeoutS = Number(values["ping-timeout"]);
/** An edge of the slice; `url` sends it elsewhere than --url, `stamp` puts each point's due time in its payload. */
interface EdgeSpec {
  uuid: string;
  secret?: string;
  url?: string;
  stamp?: boolean;
}
const edges = JSON.parse(fs.readFileSync(values["edges-file"]!, "utf8")) as EdgeSpec[];
/** Connections set up at once. */
const CONNECT_CONCURRENCY = 16;
/** Whether the system takes one message per point (the window then counts points). */
const perPoint = system === "mosquitto" || system === "nats";
/**
 * Sends an edge keeps unacknowledged: chunks or frames as the agent keeps at most its send_queue_size (default
 * 4,096) in flight; messages as the agent bench's peer producers keep QoS 1 publishes (256). Points due beyond
 * it wait in the edge, and their latency from the due time grows, instead of the generator's memory.
 */
const WINDOW = perPoint ? 256 : 4096;

interface Edge {
  sender: Sender;
  /** Payloads carry their due time: the downstream sampler of scale-out, and mosquitto's consumer, time them. */
  stamp: boolean;
  /** Set when its connection ended: the edge sends no more (counted once as an error). */
  dead: boolean;
  sent: number;
  /** Whether a point of this edge was acked yet (ours: its measurement exists in the cloud). */
  firstAcked: boolean;
}

const stats = {
  connected: 0,
  firstAcked: 0,
  connectErrors: 0,
  connectS: 0,
  sent: 0,
  sentTotal: 0,
  acked: 0,
  ackedChunks: 0,
  ackErrors: 0,
  stateChanges: 0,
  firstError: "",
};
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
/** When every edge's schedule started (set at "go"): point k of an edge is due at startNs + k/rate. */
let startNs = 0;
/** The prime point's due time: when it was sent. */
let primeNs = 0;
const dueAt = (k: number) => (k === 0 ? primeNs : startNs + (k * 1e9) / rate);
const elapsedNs = (k: number) => Math.round((k * 1e9) / rate);
let stopping = false;

async function open(spec: EdgeSpec): Promise<Edge> {
  let edge: Edge | undefined;
  const sender = await openSender(
    system,
    {
      url: spec.url ?? values.url!,
      project: values.project!,
      uuid: spec.uuid,
      secret: spec.secret ?? "",
      pingTimeoutS,
    },
    {
      acked(first, n, refused) {
        if (!edge) return;
        if (refused !== undefined) {
          stats.ackErrors++;
          note(new Error(refused));
          return;
        }
        const now = monoNs();
        if (!edge.firstAcked) {
          edge.firstAcked = true;
          stats.firstAcked++;
        }
        stats.acked += n;
        stats.ackedChunks++;
        for (let k = first; k < first + n; k++) addSample((now - dueAt(k)) / 1e6);
      },
      closed(reason) {
        if (stopping || !edge || edge.dead) return;
        edge.dead = true;
        stats.stateChanges++;
        const e = new Error(`edge ${spec.uuid}: ${reason}`);
        if (stats.stateChanges <= 3) process.stderr.write(`edges client: ${e.message}\n`);
        note(e);
      },
    },
  );
  edge = { sender, stamp: !!spec.stamp || system === "mosquitto", dead: false, sent: 0, firstAcked: false };
  return edge;
}

const live: Edge[] = [];
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
// connection storm meets another's traffic); each flush sends the points that fell due since the last one.
// Unstamped points share one payload buffer (a chunk or message is encoded at once).
const payload = Buffer.alloc(payloadB, 0x5a);
/** A payload carrying point k's sequence number and due time (u64 BE each, as the sample connector's --stamp). */
function stamped(k: number): Buffer {
  const b = Buffer.alloc(payloadB, 0x5a);
  b.writeBigUInt64BE(BigInt(k), 0);
  b.writeBigUInt64BE(BigInt(Math.round(dueAt(k))), 8);
  return b;
}

function send(e: Edge, due: number): void {
  const room = WINDOW - e.sender.unacked;
  if (e.dead || e.sent >= due || room <= 0) return;
  const upto = perPoint ? Math.min(due, e.sent + room) : due;
  const pts: Uint8Array[] = [];
  for (let k = e.sent; k < upto; k++) pts.push(e.stamp ? stamped(k) : payload);
  try {
    e.sender.send(e.sent, pts, elapsedNs);
  } catch (err) {
    // The connection ended (its reason is noted by `closed`): an error, not a crash.
    if (!e.dead) {
      e.dead = true;
      stats.stateChanges++;
      note(err);
    }
    return;
  }
  stats.sent += upto - e.sent;
  stats.sentTotal += upto - e.sent;
  e.sent = upto;
}

let timer: NodeJS.Timeout | undefined;
function tick(): void {
  const due = pointsDue(monoNs() - startNs, rate);
  for (const e of live) send(e, due);
}

process.send!({ type: "ready", connected: stats.connected, connectErrors: stats.connectErrors });
process.on("message", (m: { type: string; reset?: boolean }) => {
  if (m.type === "prime") {
    // One point per edge ahead of the schedule: its ack says the edge is set up end to end (ours: its measurement exists).
    primeNs = monoNs();
    for (const e of live) send(e, 1);
  }
  if (m.type === "go") {
    startNs = monoNs();
    timer ??= setInterval(tick, flushMs);
  }
  if (m.type === "stats") {
    const latency = Buffer.from(samples.buffer, 0, nSamples * 4).toString("base64");
    process.send!({ type: "stats", ...stats, unacked: live.reduce((n, e) => n + e.sender.unacked, 0), latency });
    if (m.reset) {
      nSamples = 0;
      stats.acked = 0;
      stats.ackedChunks = 0;
      stats.sent = 0;
    }
  }
  if (m.type === "stop") {
    stopping = true;
    clearInterval(timer);
    void Promise.allSettled(live.map((e) => e.sender.close())).finally(() => process.exit(0));
  }
});
process.on("disconnect", () => process.exit(0));
