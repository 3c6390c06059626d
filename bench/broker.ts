// iSCP broker throughput: one upstream (persist=true, RELIABLE) relayed to one downstream and stored
// as a measurement in SQLite, over WebSocket and over QUIC, with 16-byte and 1 KiB payloads.
// The cloud peer runs in a child process (a fresh one per case, so its CPU and peak RSS belong to that
// case); both iSCP clients (our runtime/iscp client) run in this process, so the send time written
// into each payload (hrtime ns, first 8 bytes) and the receive time share one clock.
// The sender keeps at most WINDOW chunks sent but not yet delivered to the downstream (closed loop),
// so the relay runs at the speed of the slowest stage without overrunning the broker's queues.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import type { CompressionParams } from "../proto/transport/compression/negotiation.js";
import { isMain, procCpuSeconds, report, type Row } from "./lib.js";
import { countBytes, type WireBytes } from "./wire-bytes.js";

type Transport = "websocket" | "quic";

/** What a case may change (bench/compression.ts): iSCP compression on both connections, the points' content. */
export interface CaseOptions {
  compression?: CompressionParams;
  /** Fills a point's bytes after its first 12 (send time, number); zeros when absent. */
  content?: (point: Buffer, n: number) => void;
  seconds?: number;
}

function argSeconds(): number | undefined {
  const a = process.argv;
  const i = a.findIndex((x) => x === "--duration" || x.startsWith("--duration="));
  if (i < 0) return undefined;
  return Number(a[i]!.includes("=") ? a[i]!.split("=")[1] : a[i + 1]);
}
/** Measured seconds per WebSocket case (`--duration=S` or BENCH_BROKER_SECONDS). */
const SECONDS = argSeconds() ?? Number(process.env.BENCH_BROKER_SECONDS ?? 10);
/** QUIC cases run as long as WebSocket ones unless told otherwise (BENCH_BROKER_QUIC_SECONDS). */
const QUIC_SECONDS = Number(process.env.BENCH_BROKER_QUIC_SECONDS ?? SECONDS);
/**
 * A memory and disk guard only, for every transport: payload bytes sent in a case, warm-up included. A case
 * that reaches it measures less than its duration, and its note says so.
 */
const MAX_BYTES = Number(process.env.BENCH_BROKER_MAX_BYTES ?? 4e9);
const WARMUP_S = 1;
const WINDOW = Number(process.env.BENCH_BROKER_WINDOW ?? 16);
/** Points per chunk: ~1.6 kB of payload per chunk for 16 B points, 16 KiB for 1 KiB points. */
const POINTS_PER_CHUNK: Record<number, number> = { 16: 100, 1024: 16 };
const DATA_ID = { name: "bench/payload", type: "bytes" };

interface BrokerInfo {
  url: string;
  quicPort?: number;
  cert?: string;
  projectUuid: string;
  adminToken: string;
  up: { uuid: string; secret: string };
  down: { uuid: string; secret: string };
}

/** Serve mode (child process): a cloud peer in `dir` with a project and two edges made through its API. */
async function serve(dir: string, quic: boolean): Promise<void> {
  const { loadConfig } = await import("../cloud/config.js");
  const { startCloudPeer } = await import("../cloud/server.js");
  const { createToken } = await import("../cloud/accounts/service/tokens.js");
  const { apiClient } = await import("../bin/demo-setup.js");
  const config = loadConfig(
    {
      listen: "127.0.0.1:0",
      dataDir: dir,
      logLevel: "silent",
      adminPassword: "Admin-password-1",
      ...(quic ? { iscpQuicListen: "127.0.0.1:0" } : {}),
    },
    {},
  );
  const peer = await startCloudPeer(config);
  const admin = (await peer.svc.accounts.findUserByName("admin"))!;
  const adminToken = (await createToken(peer.svc, admin.uuid, { name: "bench" })).token!;
  const api = apiClient(peer.url, adminToken);
  const group = await api("/auth/groups", { method: "POST", json: { name: "bench" } });
  const project = await api(`/auth/groups/${group.uuid}/projects`, { method: "POST", json: { name: "bench" } });
  const edge = async (name: string) => {
    const e = await api("/auth/edges", { method: "POST", json: { name, nickname: name } });
    await api(`/auth/projects/${project.uuid}/edges`, { method: "POST", json: { edge_name: e.name, nickname: name } });
    return { uuid: e.uuid as string, secret: e.client_secret as string };
  };
  const info: BrokerInfo = {
    url: peer.url,
    projectUuid: project.uuid,
    adminToken,
    up: await edge("bench-up"),
    down: await edge("bench-down"),
    ...(quic
      ? { quicPort: peer.svc.iscp.quicPort, cert: fs.readFileSync(path.join(dir, "quic", "cert.pem"), "utf8") }
      : {}),
  };
  process.stdout.write(`READY ${JSON.stringify(info)}\n`);
  process.once("SIGTERM", () => void peer.close().finally(() => process.exit(0)));
}

interface Broker {
  child: ChildProcess;
  info: BrokerInfo;
  stop(): Promise<void>;
}

async function startBroker(transport: Transport): Promise<Broker> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-broker-"));
  const file = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ["--import", "tsx", file, "--serve", dir, transport], {
    cwd: path.resolve(path.dirname(file), ".."),
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(t);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const info = await new Promise<BrokerInfo>((resolve, reject) => {
      readline.createInterface({ input: child.stdout! }).on("line", (line) => {
        if (line.startsWith("READY ")) resolve(JSON.parse(line.slice(6)));
      });
      child.once("exit", (code) => reject(new Error(`cloud peer exited with ${code}`)));
    });
    return { child, info, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Peak resident set of a process (VmHWM), MiB. */
function procPeakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function edgeToken(url: string, edge: { uuid: string; secret: string }): Promise<string> {
  const res = await fetch(`${url}/api/auth/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: edge.uuid, client_secret: edge.secret }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!res.ok || !body.access_token)
    throw new Error(`token for edge ${edge.uuid}: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
}

const round = (x: number, digits = 0) => +x.toFixed(digits);

export async function runCase(transport: Transport, payloadB: number, opts: CaseOptions = {}): Promise<Row> {
  const { IscpClient } = await import("../runtime/iscp/conn.js");
  const { connectWebSocket } = await import("../proto/transport/ws/client.js");
  const { connectQuic } = await import("../proto/transport/quic/client.js");
  const { compressedTransport } = await import("../proto/transport/compression/compressed-transport.js");
  const { compressionQuery } = await import("../proto/transport/compression/negotiation.js");
  const { QoS } = await import("../proto/wire/message.js");
  const perChunk = POINTS_PER_CHUNK[payloadB]!;
  const seconds = opts.seconds ?? (transport === "quic" ? QUIC_SECONDS : SECONDS);
  const maxChunks = Math.ceil(MAX_BYTES / (payloadB * perChunk));
  const broker = await startBroker(transport);
  const { info } = broker;
  const pid = broker.child.pid!;
  try {
    // The clients' own compression layer (as connectWebSocket/connectQuic put it), with the wire counted beneath it.
    const c = opts.compression && {
      ...opts.compression,
      contextTakeover: opts.compression.contextTakeover && transport === "websocket",
    };
    const query = compressionQuery(c);
    const open = async (wire: WireBytes) => {
      const t = countBytes(
        transport === "quic"
          ? await connectQuic({
              host: "127.0.0.1",
              port: info.quicPort!,
              ca: info.cert!,
              serverName: "localhost",
              extraNegotiation: query,
            })
          : await connectWebSocket({
              url: `${info.url.replace(/^http/, "ws")}/api/iscp/connect?${new URLSearchParams(query)}`,
            }),
        wire,
      );
      return c ? compressedTransport(t, c, 64 * 2 ** 20) : t;
    };
    const upWire: WireBytes = { sent: 0, received: 0 };
    const downWire: WireBytes = { sent: 0, received: 0 };
    const connect = async (edge: { uuid: string; secret: string }, wire: WireBytes) =>
      IscpClient.connect({
        transport: () => open(wire),
        token: await edgeToken(info.url, edge),
        nodeId: edge.uuid,
        projectUuid: info.projectUuid,
        reconnect: false,
      });
    const upConn = await connect(info.up, upWire);
    const downConn = await connect(info.down, downWire);
    const sessionId = randomUUID();

    // Downstream: counts, payload bytes, and latency of each chunk's first point (all points of a chunk share their send time).
    let received = 0;
    let measuring = false;
    let points = 0;
    let bytes = 0;
    let lat = new Float64Array(1 << 16);
    let nLat = 0;
    const down = await downConn.openDownstream({ filters: [{ sourceNodeId: info.up.uuid, dataFilters: [DATA_ID] }] });
    let pump = () => {};
    down.onChunk((c) => {
      const now = process.hrtime.bigint();
      received++;
      if (measuring) {
        for (const g of c.groups) {
          points += g.dataPoints.length;
          for (const p of g.dataPoints) bytes += p.payload.length;
        }
        const p0 = c.groups[0]!.dataPoints[0]!.payload;
        const sent = Buffer.from(p0.buffer, p0.byteOffset, 8).readBigUInt64LE(0);
        if (nLat === lat.length) {
          const bigger = new Float64Array(lat.length * 2);
          bigger.set(lat);
          lat = bigger;
        }
        lat[nLat++] = Number(now - sent) / 1e6;
      }
      pump();
    });

    const up = await upConn.openUpstream({ sessionId, qos: QoS.RELIABLE, persist: true });
    let acked = 0;
    let storeErrors = 0;
    up.onAck((results) => {
      acked += results.length;
      for (const r of results) if (r.resultCode !== 0) storeErrors++;
    });
    let sent = 0;
    let sending = true;
    const t0 = process.hrtime.bigint();
    pump = () => {
      while (sending && sent - received < WINDOW && sent < maxChunks) {
        const now = process.hrtime.bigint();
        const buf = Buffer.alloc(payloadB * perChunk);
        const pts = [];
        for (let i = 0; i < perChunk; i++) {
          const p = buf.subarray(i * payloadB, (i + 1) * payloadB);
          p.writeBigUInt64LE(now, 0);
          p.writeUInt32LE(sent * perChunk + i, 8);
          opts.content?.(p, sent * perChunk + i);
          pts.push({ elapsedTime: now - t0, payload: p });
        }
        up.write(DATA_ID, pts);
        up.flush();
        sent++;
      }
    };

    pump();
    await sleep(WARMUP_S * 1000);
    // Measured phase.
    const cpu0 = { broker: procCpuSeconds(pid), client: process.cpuUsage() };
    let clientRss = process.memoryUsage().rss;
    const rssTimer = setInterval(() => (clientRss = Math.max(clientRss, process.memoryUsage().rss)), 100);
    const wire0 = { up: upWire.sent, down: downWire.received, sent };
    const tMeasure = process.hrtime.bigint();
    measuring = true;
    const deadline = Date.now() + seconds * 1000;
    await until(() => Date.now() >= deadline || sent >= maxChunks, seconds * 1000 + 1000, "the measured phase");
    measuring = false;
    const tStop = process.hrtime.bigint();
    const measured = Number(tStop - tMeasure) / 1e9;
    const brokerCpu = procCpuSeconds(pid) - cpu0.broker;
    const cpu = process.cpuUsage(cpu0.client);
    const clientCpu = (cpu.user + cpu.system) / 1e6;
    const wire = {
      up: upWire.sent - wire0.up,
      down: downWire.received - wire0.down,
      points: (sent - wire0.sent) * perChunk,
    };
    const chunksMeasured = points / perChunk;
    sending = false;

    // Drain: everything sent reaches the downstream; every chunk is acked, i.e. committed (acks wait for storage).
    await until(() => received >= sent, 30_000, "downstream to receive every chunk");
    await until(() => acked >= sent, 120_000, "storage to ack every chunk");
    const tStored = process.hrtime.bigint();
    clearInterval(rssTimer);
    const sentPoints = sent * perChunk;
    const r = await fetch(`${info.url}/api/v1/projects/${info.projectUuid}/measurements/${sessionId}`, {
      headers: { "X-Intdash-Token": info.adminToken },
    });
    const meas = (await r.json()) as { received_data_points?: number };
    if (r.status !== 200 || meas.received_data_points !== sentPoints)
      throw new Error(`stored ${meas.received_data_points} points (HTTP ${r.status}), sent ${sentPoints}`);

    await upConn.close();
    await downConn.close();
    const sorted = lat.subarray(0, nLat).sort();
    return {
      transport,
      payload_B: payloadB,
      points_per_chunk: perChunk,
      in_flight_chunks: WINDOW,
      measured_s: round(measured, 1),
      points_per_s: Math.round(points / measured),
      payload_MB_per_s: round(bytes / measured / 1e6, 2),
      p50_ms: round(percentile(sorted, 50), 2),
      p99_ms: round(percentile(sorted, 99), 2),
      stored_points_per_s: Math.round(sentPoints / (Number(tStored - t0) / 1e9)),
      storage_lag_s: round(Number(tStored - tStop) / 1e9, 2),
      broker_cpu_s: round(brokerCpu, 2),
      broker_cpu_pct: Math.round((brokerCpu / measured) * 100),
      broker_rss_MiB: Math.round(procPeakRssMiB(pid)),
      client_cpu_s: round(clientCpu, 2),
      client_cpu_pct: Math.round((clientCpu / measured) * 100),
      client_rss_MiB: Math.round(clientRss / 2 ** 20),
      store_errors: storeErrors,
      up_wire_B_per_point: round(wire.up / wire.points, 1),
      down_wire_B_per_point: round(wire.down / points, 1),
      broker_cpu_us_per_chunk: Math.round((brokerCpu / chunksMeasured) * 1e6),
      client_cpu_us_per_chunk: Math.round((clientCpu / chunksMeasured) * 1e6),
      note:
        sent >= maxChunks
          ? `volume guard of ${MAX_BYTES / 1e6} MB reached: measured ${round(measured, 1)} s, not ${seconds} s`
          : "",
    };
  } finally {
    await broker.stop();
  }
}

/**
 * Columns: points/s and MB/s (payload bytes) delivered to the downstream in the measured phase
 * (after a 1 s warm-up); p50/p99 send→downstream latency under that load; stored_points_per_s = every
 * point sent / time from the first send until the last chunk was acked (the broker acks persisted chunks
 * after their SQLite commit), checked against the measurement's received_data_points over REST;
 * storage_lag_s = last ack − end of sending; CPU over the measured phase (% of one core); broker RSS = the
 * child's VmHWM (a fresh child per case), client RSS = this process's peak during the case.
 */
export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  const only = process.env.BENCH_BROKER_CASES?.split(","); // e.g. "websocket:16,quic:1024" while developing
  for (const transport of ["websocket", "quic"] as Transport[]) {
    for (const payloadB of [16, 1024])
      if (!only || only.includes(`${transport}:${payloadB}`)) rows.push(await runCase(transport, payloadB));
  }
  return rows;
}

if (process.argv[2] === "--serve") await serve(process.argv[3]!, process.argv[4] === "quic");
else if (isMain(import.meta.url)) report("broker", await run());
