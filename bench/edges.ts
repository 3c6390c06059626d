// Many edges, like for like: N edges × R points/s each, flushed every 5 ms as the agent does, into each system
// in turn, fresh for each case, in the same run: ours (one cloud peer, bin/cloud-peer.mjs, an iSCP connection
// and a persisted upstream per edge), mosquitto (a QoS 1 MQTT connection per edge, one point per message, and
// one consumer committing to SQLite with the cloud's storage code), NATS JetStream (a connection per edge, one
// point per message, file store) and a minimal Node receiver (a WebSocket per edge, append to one file, one
// fdatasync per batch of at most 5 ms, an ack per frame: the floor). The edges run in --clients child processes
// (bench/edges-client.ts), so their CPU is not the system's; it is reported apart. Per row: acked points/s,
// p50/p99/max from each point's due time to its count (counts_at says where that is), errors, CPU and peak RSS
// per process of the system, and CPU µs per chunk (the system's CPU time over the chunks, frames or messages
// acknowledged in the window).
//   npm run bench -- edges [--configs 100x1000,300x100,1000x20,1000x100,3000x10] [--systems ours,mosquitto,nats,node]
//     [--edges N --rate R] [--duration 10] [--clients 2] [--payload 16] [--ping-timeout 1]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadAverage, ProcWatch } from "../runtime/bench/proc-stats.js";
import { DEFAULT_PING_TIMEOUT_S, positive, runEdgeLoad, type EdgesCase } from "./edges-load.js";
import { SYSTEMS, type System } from "./edges-senders.js";
import { startSystem } from "./edges-systems.js";
import { formatEdgesTable } from "./edges-table.js";
import { arg, isMain, report, type ReportExtras, type Row } from "./lib.js";

export { makeEdges, runEdgeLoad, type EdgeSpec, type EdgesCase, type EdgesTarget } from "./edges-load.js";

/** Edges × points/s per edge run without --configs (or --edges and --rate): the fleet shapes of the targets. */
export const DEFAULT_CONFIGS: ReadonlyArray<readonly [number, number]> = [
  [100, 1000],
  [300, 100],
  [1000, 20],
  [1000, 100],
  [3000, 10],
];

function parseConfigs(text: string): Array<[number, number]> {
  return text.split(",").map((c) => {
    const m = /^\s*(\d+)\s*[x×]\s*(\d+(?:\.\d+)?)\s*$/.exec(c);
    if (!m || Number(m[1]) < 1 || Number(m[2]) <= 0)
      throw new Error(`--configs: EDGESxRATE,... (e.g. 100x1000,300x100), not "${c}"`);
    return [Number(m[1]), Number(m[2])];
  });
}

export function cases(): EdgesCase[] {
  const durationS = positive("duration", 10);
  const clients = Math.round(positive("clients", 2));
  const payload = Math.max(16, Math.round(positive("payload", 16)));
  const pingTimeoutS = positive("ping-timeout", DEFAULT_PING_TIMEOUT_S);
  const common = { durationS, clients, payload, pingTimeoutS };
  if (arg("edges") !== undefined || arg("rate") !== undefined) {
    if (arg("configs") !== undefined) throw new Error("--configs or --edges and --rate, not both");
    return [{ edges: Math.round(positive("edges", 100)), rate: positive("rate", 1000), ...common }];
  }
  const configs = arg("configs") === undefined ? DEFAULT_CONFIGS : parseConfigs(arg("configs")!);
  return configs.map(([edges, rate]) => ({ edges, rate, ...common }));
}

export function systems(): System[] {
  const given = (arg("systems") ?? SYSTEMS.join(",")).split(",").map((s) => s.trim());
  const bad = given.filter((s) => !(SYSTEMS as readonly string[]).includes(s));
  if (bad.length || given.length === 0)
    throw new Error(`--systems: some of ${SYSTEMS.join(", ")}, not "${bad.join(",")}"`);
  return given as System[];
}

const pct = (cpuS: number, seconds: number) => Math.round((cpuS / seconds) * 100);

/** One system under one load, started fresh in a temp dir and stopped after the window. */
export async function runSystemCase(system: System, o: EdgesCase): Promise<Row> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-edges-${system}-`));
  try {
    const sut = await startSystem(system, dir, o.edges);
    try {
      let watches: ProcWatch[] = [];
      let counted: Awaited<ReturnType<NonNullable<typeof sut.counter>["end"]>> | undefined;
      const row = await runEdgeLoad(
        dir,
        sut.target,
        sut.edges,
        o,
        {
          begin: async () => {
            watches = sut.processes.map((p) => new ProcWatch(p.name, p.pid).begin());
            await sut.counter?.begin();
          },
          closing: async () => void (counted = await sut.counter?.end()),
          end: (seconds, counts) => {
            const figures = watches.map((w) => [w.label, w.end()] as const);
            const cpuS = figures.reduce((n, [, f]) => n + (f?.cpuS ?? 0), 0);
            let chunks = counts.ackedChunks;
            let own: Row = {};
            if (counted) {
              // The system's own count replaces the clients' acknowledgments (one point per message: chunks = points).
              const c = counted;
              chunks = c.points;
              const sentTotal = counts.clients.reduce((n, s) => n + s.sentTotal, 0);
              own = {
                acked_points_per_s: Math.round(c.points / seconds),
                acked_chunks_per_s: Math.round(c.points / seconds),
                p50_ms: c.latency.p50Ms,
                p99_ms: c.latency.p99Ms,
                max_ms: c.latency.maxMs,
                unacked_chunks_at_end: sentTotal - c.total,
              };
            }
            return {
              ...own,
              "cpu_%": Object.fromEntries(figures.map(([name, f]) => [name, f ? pct(f.cpuS, seconds) : null])),
              rss_MiB: Object.fromEntries(figures.map(([name, f]) => [name, f ? Math.round(f.peakRssMiB) : null])),
              // The system's CPU time (all its processes) per chunk, frame or message acknowledged in the window.
              cpu_us_per_chunk: chunks > 0 ? +((cpuS / chunks) * 1e6).toFixed(1) : null,
            };
          },
        },
        system,
      );
      return { system, counts_at: sut.countsAt, ...row, setup_s: sut.setupS };
    } finally {
      await sut.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Ours alone (the cloud peer), as the tests and earlier callers run it. */
export const runEdgesCase = (o: EdgesCase) => runSystemCase("ours", o);

export async function run(): Promise<{ rows: Row[] } & ReportExtras> {
  const all = cases();
  const which = systems();
  const loadAtStart = loadAverage();
  process.stderr.write(
    `edges bench: load average ${loadAtStart.join(" ")} at start; ${all.length} load(s) × ${which.join(", ")}; ${all[0]!.durationS} s each; CLOUD_DURABILITY=${process.env.CLOUD_DURABILITY ?? "power-loss"}\n`,
  );
  const rows: Row[] = [];
  for (const c of all) {
    for (const system of which) {
      process.stderr.write(
        `edges bench: ${system}, ${c.edges} edges × ${c.rate} points/s for ${c.durationS} s (load average ${loadAverage().join(" ")})\n`,
      );
      try {
        rows.push(await runSystemCase(system, c));
      } catch (e) {
        process.stderr.write(`edges bench: ${system}, ${c.edges} × ${c.rate} failed: ${(e as Error).message}\n`);
        rows.push({
          system,
          edges: c.edges,
          rate_per_edge: c.rate,
          offered_points_per_s: c.edges * c.rate,
          note: `failed: ${(e as Error).message}`,
        });
      }
    }
  }
  return {
    rows,
    text: formatEdgesTable(rows),
    extra: {
      load_at_start: loadAtStart,
      durability: process.env.CLOUD_DURABILITY ?? "power-loss",
      ping_timeout_s: all[0]!.pingTimeoutS,
    },
  };
}

if (isMain(import.meta.url)) {
  const r = await run();
  console.log(`results: ${report("edges", r.rows, r)}`);
}
