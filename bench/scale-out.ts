// Scale-out: the many-edges case (bench/edges.ts: N iSCP connections, one edge each, R points/s each) on 1, 2
// and 3 cloud-peer instances over one PostgreSQL and one nats-server behind a TCP balancer, and on one instance
// on SQLite for reference, at an offered load one instance cannot carry (--offered P sets the total: R = P / N).
// Per case: points/s acked and the share of the offer carried, each row's acked rate against one instance's,
// p50/p99 (due time to ack), CPU and peak RSS per instance, PostgreSQL's CPU (all its processes), the cost per
// stored point (CPU-seconds of the instances and PostgreSQL per million points acked, in all and per instance)
// and the cross-instance latency (a sample of edges, their downstream on another instance: due time to arrival).
// PostgreSQL runs as the tests run it: fsync off, on a free port in a temp dir.
//   npm run bench -- scale-out [--edges 1000] [--rate 100 | --offered 100000] [--duration 10] [--instances 1,2,3]
//     [--no-sqlite] [--clients 2] [--payload 16] [--sample 10] [--ping-timeout 1]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadAverage, ProcWatch, TreeCpuWatch } from "../runtime/bench/proc-stats.js";
import { sampleCrossInstance, type DownstreamSampler } from "./edges-downstream.js";
import { DEFAULT_PING_TIMEOUT_S, makeEdges, positive, runEdgeLoad, type EdgesCase } from "./edges-load.js";
import { startBenchCluster, type Backend, type BenchCluster } from "./infra/cluster.js";
import { arg, isMain, report, type Row } from "./lib.js";

export interface ScaleOutCase extends EdgesCase {
  backend: Backend;
  instances: number;
  /** Edges whose points are also timed downstream on another instance. */
  sample: number;
}

const pct = (cpuS: number, seconds: number) => Math.round((cpuS / seconds) * 100);

export async function runScaleOutCase(o: ScaleOutCase): Promise<Row> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-scale-out-"));
  let cluster: BenchCluster | undefined;
  let sampler: DownstreamSampler | undefined;
  try {
    cluster = await startBenchCluster(dir, o.backend, o.instances);
    const c = cluster;
    const setup = Date.now();
    const edges = await makeEdges(c.info, o.edges);
    const viewers = await makeEdges(c.info, o.instances, "bench-viewer");
    const setupS = +((Date.now() - setup) / 1000).toFixed(2);
    sampler = await sampleCrossInstance({
      instanceUrls: c.instances.map((p) => p.info.url),
      projectUuid: c.info.projectUuid,
      edges,
      sample: o.sample,
      viewers,
    });
    const s = sampler;
    let watches: ProcWatch[] = [];
    let pgWatch: TreeCpuWatch | undefined;
    const row = await runEdgeLoad(dir, c.info, edges, o, {
      begin: () => {
        watches = c.instances.map((p, i) => new ProcWatch(`instance ${i}`, p.child.pid!).begin());
        pgWatch = c.postgresPid ? new TreeCpuWatch(c.postgresPid).begin() : undefined;
        s.reset();
      },
      end: (seconds, { ackedPoints: acked }) => {
        const figures = watches.map((w) => w.end());
        const cross = s.summary();
        const pgCpuS = pgWatch?.end();
        const cpuS = figures.reduce((n, f) => n + (f?.cpuS ?? 0), 0) + (pgCpuS ?? 0);
        const perM = (s: number) => (acked > 0 ? +((s / acked) * 1e6).toFixed(2) : null);
        return {
          "carried_%": Math.round((acked / seconds / (o.edges * o.rate)) * 100),
          "cpu_%_per_instance": figures.map((f) => (f ? pct(f.cpuS, seconds) : null)),
          rss_MiB_per_instance: figures.map((f) => (f ? Math.round(f.peakRssMiB) : null)),
          "cpu_postgres_%": pgCpuS === undefined ? null : pct(pgCpuS, seconds),
          // CPU-seconds of every instance and PostgreSQL per million points acked in the window.
          cpu_s_per_M_points: perM(cpuS),
          // Each instance's CPU-seconds per million points the cluster acked: near 1e6 / its share of the two
          // cores' capacity, the cores (not the instances) bound it.
          cpu_s_per_M_points_per_instance: figures.map((f) => (f ? perM(f.cpuS) : null)),
          downstream: o.instances > 1 ? "other instance" : "same instance",
          downstream_samples: cross.samples,
          downstream_p50_ms: cross.p50Ms,
          downstream_p99_ms: cross.p99Ms,
        };
      },
    });
    return { backend: o.backend, instances: o.instances, ...row, setup_s: setupS };
  } finally {
    await sampler?.close();
    await cluster?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function cases(): ScaleOutCase[] {
  const edges = Math.round(positive("edges", 1000));
  if (arg("offered") !== undefined && arg("rate") !== undefined)
    throw new Error("--offered (points/s in all) or --rate (per edge), not both");
  const base = {
    edges,
    // The default offer, 100,000 one-point chunks/s, is above what one instance carries on a 2-core machine.
    rate: arg("offered") !== undefined ? positive("offered", 100_000) / edges : positive("rate", 100),
    pingTimeoutS: positive("ping-timeout", DEFAULT_PING_TIMEOUT_S),
    durationS: positive("duration", 10),
    clients: Math.round(positive("clients", 2)),
    payload: Math.max(16, Math.round(positive("payload", 16))),
    sample: Math.round(positive("sample", 10)),
  };
  const instances = (arg("instances") ?? "1,2,3").split(",").map(Number);
  if (instances.some((n) => !(Number.isInteger(n) && n >= 1 && n <= 16)))
    throw new Error(`--instances: whole numbers from 1 to 16, not ${arg("instances")}`);
  const out: ScaleOutCase[] = instances.map((n) => ({ ...base, backend: "postgres", instances: n }));
  if (!process.argv.includes("--no-sqlite")) out.push({ ...base, backend: "sqlite", instances: 1 });
  return out;
}

/** Each PostgreSQL row's acked rate against the one-instance row's, and a note when one instance carried it all. */
export function compareToOne(rows: Row[]): void {
  const one = rows.find(
    (r) => r.backend === "postgres" && r.instances === 1 && typeof r.acked_points_per_s === "number",
  );
  if (!one) return;
  for (const r of rows)
    if (r.backend === "postgres" && typeof r.acked_points_per_s === "number" && (one.acked_points_per_s as number) > 0)
      r.vs_1_instance = +((r.acked_points_per_s as number) / (one.acked_points_per_s as number)).toFixed(2);
  if ((one["carried_%"] as number) >= 99)
    one.note = [one.note, "one instance carried the whole offer: raise --offered to see what more instances add"]
      .filter(Boolean)
      .join("; ");
}

export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const c of cases()) {
    process.stderr.write(
      `scale-out bench: ${c.backend} × ${c.instances}, ${c.edges} edges × ${c.rate} points/s for ${c.durationS} s (load average ${loadAverage().join(" ")})\n`,
    );
    try {
      rows.push(await runScaleOutCase(c));
    } catch (e) {
      process.stderr.write(`scale-out bench: ${c.backend} × ${c.instances} failed: ${(e as Error).message}\n`);
      rows.push({
        backend: c.backend,
        instances: c.instances,
        edges: c.edges,
        rate_per_edge: c.rate,
        note: `failed: ${(e as Error).message}`,
      });
    }
  }
  compareToOne(rows);
  return rows;
}

if (isMain(import.meta.url)) console.log(`results: ${report("scale-out", await run())}`);
