// Many edges into one cloud peer: N iSCP connections over WebSocket (one edge each, each with one persisted
// upstream) sending R points/s each, flushed every 5 ms as the agent does, into one cloud peer (child,
// `bin/cloud-peer.mjs` on a temp dir). Reports the latency from each point's due time to its chunk's ack (the
// cloud acks after the SQLite commit), the cloud's CPU and peak RSS, and every error (refused connections,
// refused chunks, dropped connections, points not acked). The clients run in --clients child processes
// (bench/edges-client.ts), so their CPU is not the cloud's.
//   npm run bench -- edges [--edges N --rate R] [--duration S] [--clients K] [--payload B]
// Without --edges and --rate it runs 100 edges × 1,000 points/s and 1,000 edges × 100 points/s.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startIpcChild, sleep, type IpcChild } from "../runtime/bench/children.js";
import { startCloudPeer, type CloudPeer } from "../runtime/bench/cloud-peer.js";
import { LatencySamples, monoNs } from "../runtime/bench/latency.js";
import { loadAverage, ProcWatch } from "../runtime/bench/proc-stats.js";
import { arg, isMain, report, type Row } from "./lib.js";

const WARMUP_S = 1;
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
  acked: number;
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
}

/** Where the edges go: a cloud's URL (or a balancer's), its admin token and the bench's project. */
export interface EdgesTarget {
  url: string;
  token: string;
  projectUuid: string;
}

/** An edge of the bench; `url` sends it elsewhere than the target's URL, `stamp` puts due times in its payloads. */
export interface EdgeSpec {
  uuid: string;
  secret: string;
  url?: string;
  stamp?: boolean;
}

/** N edges of the bench's project, made through the cloud's REST API with its admin token. */
export async function makeEdges(target: EdgesTarget, n: number, prefix = "bench-edge"): Promise<EdgeSpec[]> {
  const { url, token, projectUuid } = target;
  const post = async (p: string, json: unknown) => {
    const res = await fetch(`${url}/api${p}`, { method: "POST", headers: { "X-Intdash-Token": token, "content-type": "application/json" }, body: JSON.stringify(json) });
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

const sum = (xs: ClientStats[], f: (s: ClientStats) => number) => xs.reduce((n, s) => n + f(s), 0);

/** What the caller measures over the window: begin() as it opens, end() as it closes (its fields go on the row). */
export interface WindowHooks {
  begin(): void | Promise<void>;
  end(seconds: number, ackedPoints: number): Row | Promise<Row>;
}

/**
 * The edges' traffic: --clients child processes connect the edges (all before any sends), then all start at
 * once; after the warm-up, the window of --duration seconds is measured. Returns the row's common fields.
 */
export async function runEdgeLoad(dir: string, target: EdgesTarget, edges: EdgeSpec[], o: EdgesCase, hooks: WindowHooks): Promise<Row> {
  const clients: Array<IpcChild<unknown, ClientStats>> = [];
  try {
    const k = Math.min(o.clients, edges.length);
    const started = await Promise.allSettled(
      Array.from({ length: k }, (_, c) => {
        const file = path.join(dir, `edges-${c}.json`);
        fs.writeFileSync(file, JSON.stringify(edges.filter((_, i) => i % k === c)));
        const args = ["--url", target.url, "--project", target.projectUuid, "--edges-file", file, "--rate", String(o.rate), "--payload", String(o.payload)];
        return startIpcChild<unknown, ClientStats>("bench/edges-client.ts", args, `edges client ${c}`, 600_000).then((child) => (clients.push(child), child));
      }),
    );
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    // Each edge's first chunk makes its measurement in the cloud (tens of ms each on a busy machine, seconds for
    // hundreds of edges): every edge sends one point first, and the schedule starts once every connected edge had
    // its ack (or after FIRST_ACK_S); the row says how long that took.
    for (const c of clients) c.child.send({ type: "prime" });
    const go = monoNs();
    for (;;) {
      const now = await Promise.all(clients.map((c) => c.stats({ reset: false })));
      if (sum(now, (s) => s.firstAcked) >= sum(now, (s) => s.connected)) break;
      if (monoNs() - go > FIRST_ACK_S * 1e9) break; // the row shows the edges still without an ack as unacked chunks
      await sleep(200);
    }
    const firstAckS = +((monoNs() - go) / 1e9).toFixed(2);
    for (const c of clients) c.child.send({ type: "go" });
    await sleep(WARMUP_S * 1000);
    const clientWatches = clients.map((c, i) => new ProcWatch(`client ${i}`, c.child.pid!).begin());
    const load1 = loadAverage()[0];
    const begin = await Promise.all(clients.map((c) => c.stats({ reset: true })));
    await hooks.begin();
    const t0 = process.hrtime.bigint();
    await sleep(o.durationS * 1000);
    const end = await Promise.all(clients.map((c) => c.stats({ reset: false })));
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const acked = sum(end, (s) => s.acked);
    const measured = await hooks.end(seconds, acked);
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
      p50_ms: lat.p50Ms,
      p99_ms: lat.p99Ms,
      max_ms: lat.maxMs,
      unacked_chunks_at_end: sum(end, (s) => s.unacked),
      // Refused connections, refused chunks, connections that ended, upstreams written to after they ended.
      errors: sum(end, (s) => s.connectErrors + s.ackErrors + s.stateChanges),
      ...measured,
      // All client processes together, % of one core: near 100 × --clients, the clients (not the cloud) limit.
      "cpu_clients_%": Math.round((clientCpuS / seconds) * 100),
      load1,
    };
    if (notes.length) row.note = notes.join("; ");
    return row;
  } finally {
    await Promise.allSettled(clients.map((c) => c.stop()));
  }
}

export async function runEdgesCase(o: EdgesCase): Promise<Row> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-edges-"));
  let cloud: CloudPeer | undefined;
  try {
    cloud = await startCloudPeer(path.join(dir, "cloud"), { quic: false });
    const setup = monoNs();
    const edges = await makeEdges(cloud.info, o.edges);
    const setupS = +((monoNs() - setup) / 1e9).toFixed(2);
    let watch: ProcWatch | undefined;
    const pid = cloud.child.pid!;
    const row = await runEdgeLoad(dir, cloud.info, edges, o, {
      begin: () => void (watch = new ProcWatch("cloud", pid).begin()),
      end: (seconds) => {
        const cpu = watch!.end();
        return { "cpu_cloud_%": cpu ? Math.round((cpu.cpuS / seconds) * 100) : undefined, rss_cloud_MiB: cpu ? Math.round(cpu.peakRssMiB) : undefined };
      },
    });
    return { ...row, setup_s: setupS };
  } finally {
    await cloud?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function cases(): EdgesCase[] {
  const durationS = positive("duration", 10);
  const clients = Math.round(positive("clients", 2));
  const payload = Math.max(16, Math.round(positive("payload", 16)));
  if (arg("edges") === undefined && arg("rate") === undefined)
    return [
      { edges: 100, rate: 1000, durationS, clients, payload },
      { edges: 1000, rate: 100, durationS, clients, payload },
    ];
  return [{ edges: Math.round(positive("edges", 100)), rate: positive("rate", 1000), durationS, clients, payload }];
}

export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const c of cases()) {
    process.stderr.write(`edges bench: ${c.edges} edges × ${c.rate} points/s for ${c.durationS} s (load average ${loadAverage().join(" ")})\n`);
    rows.push(await runEdgesCase(c));
  }
  return rows;
}

if (isMain(import.meta.url)) console.log(`results: ${report("edges", await run())}`);
