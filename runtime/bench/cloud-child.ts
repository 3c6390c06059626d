// The cloud peer as a child process of the agent benchmark (its own CPU and memory in /proc): a temp data
// directory, an admin token, a project and an edge made through its API, and a tap on the broker's storage
// hook that sees each chunk once it is committed to SQLite, to time the end of a run and each point's latency
// (FIFO write time from the connector's --stamp to commit, both CLOCK_MONOTONIC on this machine).
//   node --import tsx runtime/bench/cloud-child.ts --data DIR [--quic] [--latency [--warmup-ms 1000]]   (needs an IPC channel)
// Messages: child -> parent {type: "ready", ...CloudInfo}; parent -> child {type: "stats", latency?} -> {type: "stats", ...};
// parent -> child {type: "stop"} -> the peer closes and the process exits.
import dgram from "node:dgram";
import net from "node:net";
import { parseArgs } from "node:util";
import { createToken } from "../../cloud/accounts/ops/tokens.js";
import { loadConfig } from "../../cloud/config.js";
import type { UpstreamChunkIn, UpstreamRef } from "../../cloud/measurements/upstream-store.js";
import { startCloudPeer } from "../../cloud/server.js";
import { holdFrame } from "../../proto/iscp/received-frames.js";
import { LatencySamples, monoNs, stampOf, type LatencySummary } from "./latency.js";

export interface CloudInfo {
  url: string;
  token: string;
  projectUuid: string;
  edgeUuid: string;
  edgeSecret: string;
}

export interface CloudTapStats {
  /** Points in chunks committed through the real-time (iSCP) path. */
  points: number;
  /** Earliest --stamp seen (CLOCK_MONOTONIC ns), 0 if none. */
  firstStampNs: number;
  /** When the last chunk was committed (CLOCK_MONOTONIC ns). */
  lastCommitNs: number;
  /** Only when the request asked for it ({type: "stats", latency: true}). */
  latency?: LatencySummary;
}

/** A TCP port that is free on 127.0.0.1 for both TCP and UDP (QUIC listens on the HTTP port's number). */
async function freePort(): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = net.createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
      s.on("error", reject);
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const u = dgram.createSocket("udp4");
      u.once("error", () => resolve(false));
      u.bind(port, "127.0.0.1", () => u.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error("no free port");
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { data: { type: "string" }, quic: { type: "boolean", default: false }, "warmup-ms": { type: "string", default: "1000" }, latency: { type: "boolean", default: false } } });
  if (!values.data || !process.send) throw new Error("cloud-child needs --data and an IPC channel");
  const port = await freePort();
  const listen = `127.0.0.1:${port}`;
  const config = loadConfig(
    // The durability under test comes from the bench's environment (CLOUD_DURABILITY), as for a real peer.
    { listen, dataDir: values.data, logLevel: "warn", adminPassword: "Bench-password-1", durability: process.env.CLOUD_DURABILITY, ...(values.quic ? { iscpQuicListen: listen } : {}) },
    {},
  );
  const peer = await startCloudPeer(config);
  const admin = (await peer.svc.accounts.findUserByName("admin"))!;
  const token = (await createToken(peer.svc, admin.uuid, { name: "bench" })).token!;
  const api = async (p: string, json: unknown) => {
    const res = await fetch(`${peer.url}/api${p}`, { method: "POST", headers: { "X-Intdash-Token": token, "content-type": "application/json" }, body: JSON.stringify(json) });
    if (res.status >= 400) throw new Error(`POST ${p}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
  const group = await api("/auth/groups", { name: "bench" });
  const project = await api(`/auth/groups/${group.uuid}/projects`, { name: "bench" });
  const edge = await api("/auth/edges", { name: "bench-edge", nickname: "Benchmark edge" });
  await api(`/auth/projects/${project.uuid}/edges`, { edge_name: edge.name, nickname: "Benchmark edge" });

  // The tap: the broker calls storeChunk per chunk; it resolves once the chunk's transaction committed.
  const warmupNs = Number(values["warmup-ms"]) * 1e6;
  const measureLatency = values.latency!;
  const latency = new LatencySamples();
  const stats = { points: 0, firstStampNs: 0, lastCommitNs: 0 };
  const upstream = peer.svc.measurements.upstream;
  const storeChunk = upstream.storeChunk.bind(upstream);
  upstream.storeChunk = (up: UpstreamRef, chunk: UpstreamChunkIn) => {
    // The stamps are read after the commit: the received frame is held until then (received-frames.ts).
    const release = holdFrame(chunk.dataPointGroups[0]?.raw?.raw);
    const done = storeChunk(up, chunk);
    void done
      .then(
        (r) => {
          if (r !== "ok") return;
          const now = monoNs();
          stats.lastCommitNs = now;
          for (const g of chunk.dataPointGroups) {
            // Per-point latency only in the latency case (--latency): reading every stamp at a million points/s
            // would tax the cloud the throughput cases measure. Received bytes (g.raw) are read in place.
            const each = (fn: (payload: Uint8Array) => boolean | void) => (g.raw ? g.raw.eachPayload(fn) : void g.dataPoints.every((p) => fn(p.payload) !== false));
            stats.points += g.raw ? g.raw.count : g.dataPoints.length;
            each((payload) => {
              const first = stampOf(payload);
              if (first !== undefined && (stats.firstStampNs === 0 || first < stats.firstStampNs)) stats.firstStampNs = first;
              return false;
            });
            if (measureLatency)
              each((payload) => {
                const st = stampOf(payload);
                if (st !== undefined && st - stats.firstStampNs >= warmupNs) latency.add((now - st) / 1e6);
              });
          }
        },
        () => undefined,
      )
      .finally(release);
    return done;
  };

  const info: CloudInfo = { url: peer.url, token, projectUuid: project.uuid!, edgeUuid: edge.uuid!, edgeSecret: edge.client_secret! };
  process.send({ type: "ready", ...info });
  process.on("message", (m: { type: string; latency?: boolean }) => {
    // Percentiles sort every sample: only when asked (at the end), not at each progress poll.
    if (m.type === "stats") process.send!({ type: "stats", ...stats, latency: m.latency ? latency.summary() : undefined } satisfies CloudTapStats & { type: string });
    if (m.type === "stop") void peer.close().finally(() => process.exit(0));
  });
  process.on("disconnect", () => void peer.close().finally(() => process.exit(0)));
  process.on("SIGTERM", () => void peer.close().finally(() => process.exit(0)));
}

main().catch((e: unknown) => {
  process.stderr.write(`cloud-child: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
