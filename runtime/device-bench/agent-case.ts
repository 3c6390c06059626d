// One case of the agent benchmark through the real path: sample connector (child) -> FIFO -> edge agent
// (child: decoder, LMDB queue, iSCP upstream over WebSocket or QUIC) -> cloud peer (child, or a remote server)
// -> SQLite. Counts points as stored by the cloud, times them from the connector's first write to the last
// commit (the cloud's commit trace, or polls of its API for a remote one), and reads each process's CPU and
// peak RSS from /proc.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fetchToken } from "../deferred/cloud-auth.js";
import { ApiClient } from "../cli/client.js";
import { MALLOC_ENV } from "../malloc-env.js";
import { ROOT, nodeArgs, sleep, startConnector, stopChild, waitForFifo, type ConnectorReport } from "./children.js";
export type { Progress } from "./drive.js";
import { startCloudPeer, type CloudPeer } from "./cloud-peer.js";
import { drive, type Progress } from "./drive.js";
import { LatencySamples, commitLatency, monoNs, readWriteLog, type LatencySummary } from "./latency.js";
import { ProcWatch } from "./proc-stats.js";

export type Transport = "websocket" | "quic";

/** A cloud that is already running (edge-agent bench --server): the edge's credentials. */
export interface RemoteServer {
  url: string;
  projectUuid: string;
  edgeUuid: string;
  clientSecret: string;
}

export interface AgentCaseOptions {
  transport: Transport;
  /** Payload bytes per point (16 or more carry the sequence number and the write time). */
  payload: number;
  /** Points/s the connector writes; 0 = as fast as the agent reads. */
  rate: number;
  /** How long the connector writes. */
  durationS: number;
  /** At most this many points (0 = no cap): bounds the volume of slow transports and large payloads. */
  maxPoints?: number;
  /** Measure each point's latency (the cloud peer reads every stamp; meant for fixed-rate cases). */
  latency?: boolean;
  /** A remote cloud; without it a cloud peer is started as a child on a temp dir. */
  server?: RemoteServer;
  /** How long to wait for the last points after the connector stopped. */
  drainTimeoutS?: number;
  /** The upstream's flush_policy: `interval` (default, every 5 ms as the spec's default) or `immediately`. */
  flush?: "interval" | "immediately";
  onProgress?: (p: Progress) => void;
  /**
   * Called once the points flow, with the pid of each process the case watches (connector, agent, cloud) and a
   * client of the agent's command API (its metrics: the agent's own memory figures).
   */
  onWatching?: (pids: Record<string, number>, agentApi: ApiClient) => void;
}

export interface ProcFigures {
  cpuS: number;
  peakRssMiB: number;
}

export interface CaseResult {
  path: string;
  payloadB: number;
  /** Offered rate (points/s), 0 = as fast as possible. */
  rate: number;
  sent: number;
  stored: number;
  seconds: number;
  pointsPerS: number;
  /** Payload bytes per second (MB = 10^6 bytes). */
  MBPerS: number;
  latency?: LatencySummary & { method: string };
  procs: Record<string, ProcFigures | undefined>;
  note: string;
}

/** The latency case leaves out the first second (warm-up). */
const WARMUP_NS = 1e9;

export async function startAgentChild(dir: string): Promise<{ child: ChildProcess; api: ApiClient }> {
  const socket = path.join(dir, "agent.sock");
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs(),
      path.join(ROOT, "bin/edge-agent.mjs"),
      "--socket",
      socket,
      "--data",
      path.join(dir, "agent"),
      "--log-level",
      "warn",
    ],
    {
      cwd: ROOT,
      // As deploy/edge-agent.service runs it (a variable set for the bench wins).
      env: { ...MALLOC_ENV, ...process.env },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const api = new ApiClient(socket);
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`edge agent exited with ${child.exitCode}`);
    if ((await api.get("/version").catch(() => undefined))?.status === 200) return { child, api };
    await sleep(100);
  }
  await stopChild(child, "SIGKILL");
  throw new Error("edge agent did not start within 60 s");
}

export async function call(api: ApiClient, method: string, p: string, body?: unknown): Promise<unknown> {
  const r = await api.request(method, p, body);
  if (r.status >= 400) throw new Error(`agent ${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Reads the stored point count of a measurement from the cloud's API (0 while it does not exist). */
function cloudCounter(server: RemoteServer, auth: () => Promise<Record<string, string>>) {
  return async (measurement: string): Promise<number> => {
    const res = await fetch(
      `${server.url.replace(/\/+$/, "")}/api/v1/projects/${server.projectUuid}/measurements/${measurement}`,
      { headers: await auth() },
    );
    if (res.status === 404) return 0;
    if (res.status !== 200) throw new Error(`GET measurement: ${res.status} ${(await res.text()).slice(0, 200)}`);
    return ((await res.json()) as { received_data_points?: number }).received_data_points ?? 0;
  };
}

/**
 * Points the agent at `server` over `transport`: an upstream "bench" (persisted, recovered, partial QoS) fed by a
 * device connector on `fifo`; resolves once the upstream is connected.
 */
export async function configureBenchAgent(
  api: ApiClient,
  server: RemoteServer,
  transport: Transport,
  flush: "interval" | "immediately",
  fifo: string,
): Promise<void> {
  await call(api, "PATCH", "/connection", {
    server_url: server.url,
    project_uuid: server.projectUuid,
    edge_uuid: server.edgeUuid,
    client_secret: server.clientSecret,
  });
  await call(api, "PATCH", "/transport", { protocol: transport });
  await call(api, "POST", "/upstreams", {
    id: "bench",
    persist: true,
    recover: true,
    qos: "partial",
    flush_policy: flush,
    flush_interval: 5,
  });
  await call(api, "POST", "/device-connectors/upstream", {
    id: "bench",
    format: "iscp-v2-compat",
    dest_ids: ["bench"],
    ipc: { type: "fifo", path: fifo },
  });
  const end = Date.now() + 60_000;
  for (;;) {
    const st = (await api.get<{ code: string; error: string }>("/upstreams/bench/state")).body;
    if (st.code === "connected" || st.code === "quiet") return;
    if (Date.now() > end)
      throw new Error(`the agent's upstream did not connect to ${server.url}: ${st.code} ${st.error}`);
    await sleep(100);
  }
}

export async function runAgentCase(o: AgentCaseOptions): Promise<CaseResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "edge-bench-"));
  const flush = o.flush ?? "interval";
  const label = `ours/${o.transport}${flush === "immediately" ? ",flush=immediately" : ""}`;
  let cloud: CloudPeer | undefined;
  let agent: ChildProcess | undefined;
  let connector: ReturnType<typeof startConnector> | undefined;
  try {
    let server = o.server;
    let auth: () => Promise<Record<string, string>>;
    if (!server) {
      cloud = await startCloudPeer(path.join(dir, "cloud"), { quic: o.transport === "quic" });
      const info = cloud.info;
      server = { url: info.url, projectUuid: info.projectUuid, edgeUuid: info.edgeUuid, clientSecret: info.edgeSecret };
      auth = async () => ({ "X-Intdash-Token": info.token });
    } else {
      const s = server;
      let token: { value: string; until: number } | undefined;
      auth = async () => {
        if (!token || Date.now() > token.until) {
          const t = await fetchToken({
            server_url: s.url,
            project_uuid: s.projectUuid,
            edge_uuid: s.edgeUuid,
            client_secret: s.clientSecret,
          });
          token = { value: t.accessToken, until: Date.now() + (t.expiresIn / 2) * 1000 };
        }
        return { authorization: `Bearer ${token.value}` };
      };
      await auth(); // wrong credentials fail here, before anything starts
    }
    const storedIn = cloudCounter(server, auth);

    const started = await startAgentChild(dir);
    agent = started.child;
    const api = started.api;
    // In the agent's own IPC folder (next to its socket), where its launch policy allows FIFOs by default.
    const fifo = path.join(dir, "ipc", "up.fifo");
    await configureBenchAgent(api, server, o.transport, flush, fifo);
    await waitForFifo(fifo);

    const cap = o.maxPoints ?? 0;
    const count = o.rate > 0 ? Math.max(1, Math.round(o.rate * o.durationS)) : 0;
    // The latency case pairs each point's write stamp (the connector's write log) with its commit (the trace).
    const writeLog = o.latency && cloud ? path.join(dir, "writes.log") : undefined;
    connector = startConnector({
      fifo,
      rate: o.rate,
      size: o.payload,
      count: cap > 0 ? (count > 0 ? Math.min(count, cap) : cap) : count,
      writeLog,
    });
    const watches = [
      new ProcWatch("connector", connector.child.pid!),
      new ProcWatch("agent", agent.pid!),
      ...(cloud ? [new ProcWatch("cloud", cloud.child.pid!)] : []),
    ];
    // The measurement (its UUID is the cloud's measurement UUID) appears at the agent's first accepted point.
    let measurement = "";
    const remoteLatency = o.latency && !cloud ? new CounterLatency(o.rate) : undefined;
    let lastApiCheck = 0;
    let stalled = "";
    const run = await drive({
      connector,
      rate: o.rate,
      durationS: o.durationS,
      drainMs: (o.drainTimeoutS ?? Math.max(30, o.durationS * 5)) * 1000,
      pollMs: remoteLatency ? 20 : 250,
      flowing: async () =>
        !!(measurement =
          (await api.get<{ items: Array<{ uuid: string }> }>("/measurements")).body.items?.[0]?.uuid ?? ""),
      onFlowing: () => {
        watches.forEach((w) => w.begin());
        o.onWatching?.(Object.fromEntries(watches.map((w) => [w.label, w.pid])), api);
      },
      stored: async (report) => {
        if (!cloud) return storedIn(measurement);
        let n = cloud.trace().points;
        // Chunks that took the deferred-upload path (REST) are not in the commit trace: the API's count covers them.
        if (report && n < report.sent && monoNs() - lastApiCheck > 2e9) {
          lastApiCheck = monoNs();
          n = Math.max(n, await storedIn(measurement));
        }
        return n;
      },
      onPoll: (now, n) => remoteLatency?.observe(now, n),
      // Chunks in flight when the iSCP connection was cut lost their acks: they stay in LMDB and go by deferred
      // upload once the measurement ends, which closing the IPC channel does (2 s later), as at a device's stop.
      onStall: async () => {
        stalled = (await api.get<{ error: string }>("/upstreams/bench/state")).body.error || "no progress";
        await call(api, "DELETE", "/device-connectors/upstream/bench");
      },
      onProgress: o.onProgress,
    });
    const procs: Record<string, ProcFigures | undefined> = {};
    for (const w of watches) procs[w.label] = w.end();
    const { report, stored } = run;
    const sent = report.sent;
    let last = run.doneAt || monoNs();
    let latency: CaseResult["latency"];
    const notes: string[] = [];
    if (cloud) {
      const trace = cloud.trace();
      if (trace.points >= sent) last = trace.lastCommitNs; // the commit itself, not the poll that saw it
      if (writeLog) {
        await connector.stop(1000).catch(() => undefined); // the write log is written when it stops
        if (fs.existsSync(writeLog))
          latency = {
            ...commitLatency(trace.commits, readWriteLog(writeLog), WARMUP_NS).summary(),
            method: "FIFO write to SQLite commit",
          };
      }
      const counted = await storedIn(measurement);
      if (counted !== stored && counted < sent) notes.push(`cloud API counts ${counted}`);
    } else if (remoteLatency) latency = { ...remoteLatency.summary(report), method: "polled every 20 ms" };
    if (stalled) notes.push(`stalled (${stalled}): the rest came by deferred upload after the measurement ended`);
    if (stored < sent)
      notes.push(`incomplete: ${sent - stored} of ${sent} points not stored within ${run.drainMs / 1000} s`);
    const seconds = Math.max(1e-9, (last - report.first_ns) / 1e9);
    const points = Math.min(stored, sent);
    return {
      path: label,
      payloadB: o.payload,
      rate: o.rate,
      sent,
      stored: points,
      seconds: +seconds.toFixed(3),
      pointsPerS: Math.round(points / seconds),
      MBPerS: +((points * o.payload) / seconds / 1e6).toFixed(2),
      latency,
      procs,
      note: notes.join("; "),
    };
  } finally {
    await connector?.stop(1000).catch(() => undefined);
    await stopChild(agent, "SIGTERM", 3000);
    await cloud?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Latency against a remote cloud, whose clock is not ours: point k of a fixed-rate connector is written at
 * about first_ns + k/rate, and is stored by the first poll that counts more than k points. Resolution: the
 * poll interval.
 */
class CounterLatency {
  private polls: Array<[number, number]> = [];
  constructor(private readonly rate: number) {}

  observe(monoNs: number, stored: number): void {
    const last = this.polls[this.polls.length - 1];
    if (!last || stored > last[1]) this.polls.push([monoNs, stored]);
  }

  summary(report: ConnectorReport): LatencySummary {
    const s = new LatencySamples();
    let k = Math.round(this.rate); // skip the first second (warm-up), as the local measurement does
    for (const [t, n] of this.polls) for (; k < n; k++) s.add((t - (report.first_ns + (k * 1e9) / this.rate)) / 1e6);
    return s.summary();
  }
}
