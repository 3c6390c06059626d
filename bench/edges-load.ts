// The many-edges bench's load: the edges' client processes (bench/edges-client.ts, --clients of them, so that
// their CPU is not the system's) connect every edge, each edge sends one point and waits for its ack, then
// all start their schedule together; after a warm-up the window of --duration seconds is measured. Shared by
// the edges bench (bench/edges.ts) and the scale-out bench (bench/scale-out.ts).
import fs from "node:fs";
import path from "node:path";
import { startIpcChild, sleep, type IpcChild } from "../runtime/bench/children.js";
import { LatencySamples, monoNs } from "../runtime/bench/latency.js";
import { loadAverage, ProcWatch } from "../runtime/bench/proc-stats.js";
import { arg, type Row } from "./lib.js";
import type { System } from "./edges-senders.js";

const WARMUP_S = 1;
/**
 * The edges' Pong wait (s) unless --ping-timeout says otherwise: the agent's own, 1 s. The broker answers Pings
 * ahead of the chunks it holds, so a cloud merely behind on storing drops no connection (docs/iscp.md).
 */
export const DEFAULT_PING_TIMEOUT_S = 1;
/** How long the edges' first chunks may take to be acked (the cloud makes one measurement per edge then). */
const FIRST_ACK_S = 180;
/** Edges set up at once through the cloud's REST API. */
const SETUP_CONCURRENCY = 32;

export interface ClientStats {
  connected: number;
  /** Edges with at least one chunk acked (their measurement was made). */
  firstAcked: number;
  connectErrors: number;
  connectS: number;
  sent: number;
  /** Points sent since the client started (the window's `sent` starts again at each reset). */
  sentTotal: number;
  acked: number;
  /** Acknowledgments in the window: one per chunk (ours), frame (Node receiver) or message (mosquitto, NATS). */
  ackedChunks: number;
  ackErrors: number;
  stateChanges: number;
  firstError: string;
  unacked: number;
  /** The window's latency samples (ms), a Float32Array in base64. */
  latency: string;
}

export function positive(name: string, fallback: number): number {
  const v = Number(arg(name) ?? fallback);
  if (!(Number.isFinite(v) && v > 0)) throw new Error(`--${name} must be a positive number, not ${arg(name)}`);
  return v;
}

export interface EdgesCase {
  edges: number;
  rate: number;
  durationS: number;
  clients: number;
  payload: number;
  /** How long an edge waits for a Pong before it drops its connection (ours only), s. */
  pingTimeoutS?: number;
}

/** Where the edges go: a cloud's URL (or a balancer's), its admin token and the bench's project (a peer: its URL only). */
export interface EdgesTarget {
  url: string;
  token: string;
  projectUuid: string;
}

/** An edge of the bench; `url` sends it elsewhere than the target's URL, `stamp` puts due times in its payloads. */
export interface EdgeSpec {
  uuid: string;
  /** ours: the edge's client secret (a peer's edges have none). */
  secret: string;
  url?: string;
  stamp?: boolean;
}

/** N edges of the bench's project, made through the cloud's REST API with its admin token. */
export async function makeEdges(target: EdgesTarget, n: number, prefix = "bench-edge"): Promise<EdgeSpec[]> {
  const { url, token, projectUuid } = target;
  const post = async (p: string, json: unknown) => {
    const res = await fetch(`${url}/api${p}`, {
      method: "POST",
      headers: { "X-Intdash-Token": token, "content-type": "application/json" },
      body: JSON.stringify(json),
    });
    if (res.status >= 400) throw new Error(`POST ${p}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
  const out: EdgeSpec[] = [];
  for (let i = 0; i < n; i += SETUP_CONCURRENCY) {
    const made = await Promise.all(
      Array.from({ length: Math.min(SETUP_CONCURRENCY, n - i) }, async (_, j) => {
        const name = `${prefix}-${i + j}`;
        const e = await post("/auth/edges", { name, nickname: name });
        await post(`/auth/projects/${projectUuid}/edges`, { edge_name: e.name, nickname: name });
        return { uuid: e.uuid!, secret: e.client_secret! };
      }),
    );
    out.push(...made);
  }
  return out;
}

/** How long a client may take to answer for its figures before the case fails (one swamped by its own backlog). */
const STATS_TIMEOUT_MS = 60_000;

function statsOf(c: IpcChild<unknown, ClientStats>, i: number, reset: boolean): Promise<ClientStats> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(
        () => reject(new Error(`edges client ${i} did not answer for its figures within ${STATS_TIMEOUT_MS / 1000} s`)),
        STATS_TIMEOUT_MS,
      )),
  );
  return Promise.race([c.stats({ reset }), late]).finally(() => clearTimeout(timer));
}

const sum = (xs: ClientStats[], f: (s: ClientStats) => number) => xs.reduce((n, s) => n + f(s), 0);

/** What the clients counted over the window. */
export interface WindowCounts {
  ackedPoints: number;
  ackedChunks: number;
  clients: ClientStats[];
}

/**
 * What the caller measures over the window: begin() as it opens (at the same time as the clients' counts start),
 * closing() as it closes (at the same time as the clients' counts are taken), then end() (its fields go on the row, last).
 */
export interface WindowHooks {
  begin(): void | Promise<void>;
  closing?(): Promise<void>;
  end(seconds: number, counts: WindowCounts): Row | Promise<Row>;
}

/**
 * The edges' traffic: --clients child processes connect the edges (all before any sends), then all start at
 * once; after the warm-up, the window of --duration seconds is measured. Returns the row's common fields.
 */
export async function runEdgeLoad(
  dir: string,
  target: EdgesTarget,
  edges: EdgeSpec[],
  o: EdgesCase,
  hooks: WindowHooks,
  system: System = "ours",
): Promise<Row> {
  const clients: Array<IpcChild<unknown, ClientStats>> = [];
  try {
    const k = Math.min(o.clients, edges.length);
    const started = await Promise.allSettled(
      Array.from({ length: k }, (_, c) => {
        const file = path.join(dir, `edges-${c}.json`);
        fs.writeFileSync(file, JSON.stringify(edges.filter((_, i) => i % k === c)));
        const args = [
          "--system",
          system,
          "--url",
          target.url,
          "--project",
          target.projectUuid,
          "--edges-file",
          file,
          "--rate",
          String(o.rate),
          "--payload",
          String(o.payload),
          "--ping-timeout",
          String(o.pingTimeoutS ?? DEFAULT_PING_TIMEOUT_S),
        ];
        return startIpcChild<unknown, ClientStats>("bench/edges-client.ts", args, `edges client ${c}`, 600_000).then(
          (child) => (clients.push(child), child),
        );
      }),
    );
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    // Each edge's first chunk makes its measurement in the cloud (tens of ms each on a busy machine, seconds for
    // hundreds of edges): every edge sends one point first (on every system, alike), and the schedule starts once
    // every connected edge had its ack (or after FIRST_ACK_S); the row says how long that took.
    for (const c of clients) c.child.send({ type: "prime" });
    const go = monoNs();
    for (;;) {
      const now = await Promise.all(clients.map((c, i) => statsOf(c, i, false)));
      if (sum(now, (s) => s.firstAcked) >= sum(now, (s) => s.connected)) break;
      if (monoNs() - go > FIRST_ACK_S * 1e9) break; // the row shows the edges still without an ack as unacked chunks
      await sleep(200);
    }
    const firstAckS = +((monoNs() - go) / 1e9).toFixed(2);
    for (const c of clients) c.child.send({ type: "go" });
    await sleep(WARMUP_S * 1000);
    const clientWatches = clients.map((c, i) => new ProcWatch(`client ${i}`, c.child.pid!).begin());
    const load1 = loadAverage()[0];
    const [begin] = await Promise.all([Promise.all(clients.map((c, i) => statsOf(c, i, true))), hooks.begin()]);
    const t0 = process.hrtime.bigint();
    await sleep(o.durationS * 1000);
    const [end] = await Promise.all([Promise.all(clients.map((c, i) => statsOf(c, i, false))), hooks.closing?.()]);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const acked = sum(end, (s) => s.acked);
    const ackedChunks = sum(end, (s) => s.ackedChunks);
    const measured = await hooks.end(seconds, { ackedPoints: acked, ackedChunks, clients: end });
    const clientCpuS = clientWatches.reduce((n, w) => n + (w.end()?.cpuS ?? 0), 0);
    const samples = new LatencySamples();
    for (const s of end) {
      const b = Uint8Array.from(Buffer.from(s.latency, "base64")); // a copy: aligned for the Float32Array view
      for (const v of new Float32Array(b.buffer)) samples.add(v);
    }
    const lat = samples.summary();
    const notes = end.map((s) => s.firstError).filter(Boolean);
    const row: Row = {
      edges: edges.length,
      rate_per_edge: o.rate,
      payload_B: o.payload,
      connected: sum(begin, (s) => s.connected),
      connect_s: Math.max(...begin.map((s) => s.connectS)),
      // From each edge's first point until all were acked (their measurements made), before the schedule started.
      first_ack_s: firstAckS,
      seconds: +seconds.toFixed(2),
      offered_points_per_s: edges.length * o.rate,
      // What the clients wrote: below the offer when they (or their sockets, full while the cloud does not read) fall behind.
      sent_points_per_s: Math.round(sum(end, (s) => s.sent) / seconds),
      acked_points_per_s: Math.round(acked / seconds),
      acked_chunks_per_s: Math.round(ackedChunks / seconds),
      p50_ms: lat.p50Ms,
      p99_ms: lat.p99Ms,
      max_ms: lat.maxMs,
      // Chunks, frames or messages sent and not acknowledged when the window closed.
      unacked_chunks_at_end: sum(end, (s) => s.unacked),
      // Refused connections, refused chunks, connections that ended, upstreams written to after they ended.
      errors: sum(end, (s) => s.connectErrors + s.ackErrors + s.stateChanges),
      ...measured,
      // All client processes together, % of one core: near 100 × --clients, the clients (not the system) limit.
      "cpu_clients_%": Math.round((clientCpuS / seconds) * 100),
      load1,
    };
    if (notes.length) row.note = notes.join("; ");
    return row;
  } finally {
    await Promise.allSettled(clients.map((c) => c.stop()));
  }
}
