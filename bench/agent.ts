// End to end: sample connector -> FIFO -> agent (LMDB) -> iSCP (WebSocket, QUIC) -> cloud peer -> SQLite, and the
// same data through mosquitto (QoS 1, persistence) and NATS JetStream (file storage), each peer twice: one point
// per message, and batched (as many points per message as our chunk holds at that payload size). The peers'
// consumer stores what it receives with the cloud's storage code and settings (bench/peers/sink.ts), so every
// path counts a point at a SQLite commit; counts_at and ack_means say what that and the sender's ack mean.
// Throughput at 16 B, 1 KiB and 64 KiB as fast as possible, each case --reps times (ours and the peers in
// alternating order), printed as the median with min-max; then latency at 10,000 points/s with 16 B payloads
// (ours with the default flush_policy, interval 5 ms, and with immediately, as the peers' clients publish).
// Every case is time-bound: the connector writes for --duration seconds; a volume guard (disk and memory)
// stops it earlier only in an emergency, and the row's note says so.
//   npm run bench -- agent [--duration S] [--reps N] [--payloads 16,1024] [--paths ours/websocket,nats/batched]
//     [--no-latency]      (or: npx tsx bench/agent.ts ...; defaults 3 s, 3 repetitions, every payload and path)
// The cloud peer and the peers' store run with CLOUD_DURABILITY from the environment (default power-loss).
import fs from "node:fs";
import os from "node:os";
import { runAgentCase, type AgentCaseOptions, type CaseResult } from "../runtime/device-bench/agent-case.js";
import type { Progress } from "../runtime/device-bench/drive.js";
import { loadAverage } from "../runtime/device-bench/proc-stats.js";
import { caseRow, type Row } from "../runtime/device-bench/table.js";
import { parseDurability } from "../cloud/config.js";
import type { Durability } from "../cloud/database/db.js";
import { ackMeans, countsAt, formatAgentTable, medianRow, oursCountsAt, ratios } from "./agent-table.js";
import { arg, isMain, report, type ReportExtras } from "./lib.js";
import { pointsPerChunk } from "./peers/batch.js";
import { runPeerCase, type PeerName } from "./peers/peer-case.js";

const PAYLOADS = [16, 1024, 64 * 1024];
const PATHS = ["ours/websocket", "ours/quic", "mosquitto", "mosquitto/batched", "nats", "nats/batched"];
const LATENCY_RATE = 10_000;
/** Our upstream's flush_interval in the bench (ms): how many points one interval chunk holds at a fixed rate. */
const FLUSH_MS = 5;
const LOAD_WARNING = 1.5;
/**
 * How long a throughput case may take to store what was written in --duration: a peer broker takes messages
 * faster than its consumer stores them, and our agent's queue takes points faster than the cloud commits them.
 */
const drainS = (o: { durationS: number }) => Math.max(120, o.durationS * 10);

/**
 * The volume guard, in points: a quarter of the free space of the temp folder's disk, at most 8 GiB of payload.
 * A case that reaches it ran shorter than --duration (noted on its row).
 */
function volumeGuard(payload: number): number {
  const st = fs.statfsSync(os.tmpdir());
  const bytes = Math.min(8 * 2 ** 30, (st.bavail * st.bsize) / 4);
  return Math.max(1, Math.floor(bytes / payload));
}

export interface AgentBenchOptions {
  durationS: number;
  reps: number;
  payloads: number[];
  paths: string[];
  latency: boolean;
  durability: Durability;
}

export function options(): AgentBenchOptions {
  const durationS = Number(arg("duration") ?? process.env.BENCH_DURATION ?? 3);
  if (!(durationS > 0)) throw new Error(`--duration must be a positive number of seconds, not ${arg("duration")}`);
  const reps = Number(arg("reps") ?? 3);
  if (!(Number.isInteger(reps) && reps >= 1))
    throw new Error(`--reps must be a whole number, at least 1, not ${arg("reps")}`);
  const payloads = (arg("payloads")?.split(",") ?? PAYLOADS).map(Number);
  if (payloads.some((p) => !(Number.isInteger(p) && p >= 16)))
    throw new Error(`--payloads: whole numbers of bytes, at least 16 (the stamp), not ${arg("payloads")}`);
  const paths = arg("paths")?.split(",") ?? PATHS;
  const unknown = paths.filter((p) => !PATHS.includes(p));
  if (unknown.length) throw new Error(`--paths: unknown ${unknown.join(", ")}; known: ${PATHS.join(", ")}`);
  // A bad CLOUD_DURABILITY stops the run before its first case.
  return {
    durationS,
    reps,
    payloads,
    paths,
    latency: !process.argv.includes("--no-latency"),
    durability: parseDurability(process.env.CLOUD_DURABILITY),
  };
}

function progress(label: string) {
  const tty = process.stderr.isTTY;
  return (p: Progress) => {
    const line = `  ${label}: ${p.elapsedS.toFixed(0)} s, ${p.stored} points${p.sent !== undefined ? ` of ${p.sent}` : ""}, ${Math.round(p.rate)} points/s`;
    process.stderr.write(tty ? `\r${line}\u001b[K` : `${line}\n`);
  };
}

interface CaseSpec {
  kind: "throughput" | "latency";
  path: string;
  payload: number;
  rate: number;
  /** The most points one message (ours: one chunk) holds. */
  pointsPerMessage: number;
  /**
   * The typical stored chunk's payload bytes, what counts_at depends on: full chunks when written as fast as
   * possible (ours, and the peers' consumer, which groups what it receives the same way); at a fixed rate, the
   * points one flush (ours) or one commit (the peers' consumer) gathers, taken as pointsPerMessage.
   */
  storedChunkBytes: number;
  guard?: number;
  run(onProgress: (p: Progress) => void): Promise<CaseResult>;
}

async function attempt(c: CaseSpec, durability: Durability): Promise<Row> {
  const label = c.path;
  process.stderr.write(
    `agent bench: ${label}, ${c.payload} B, ${c.rate === 0 ? "as fast as possible" : `${c.rate} points/s`}\n`,
  );
  const meaning = {
    points_per_message: c.pointsPerMessage,
    counts_at: c.path.startsWith("ours/")
      ? oursCountsAt(durability, c.storedChunkBytes)
      : countsAt(durability, c.storedChunkBytes),
    ack_means: ackMeans(c.path, durability),
  };
  try {
    const result = await c.run(progress(label));
    if (process.stderr.isTTY) process.stderr.write("\n");
    const row: Row = { case: c.kind, ...caseRow(result, { roles: true }), ...meaning, load1: loadAverage()[0] };
    const notes = [result.note];
    if (c.guard !== undefined && result.sent >= c.guard)
      notes.push(`volume guard of ${c.guard} points reached: the connector stopped before the duration`);
    row.note = notes.filter(Boolean).join("; ") || undefined;
    if (!row.note) delete row.note;
    return row;
  } catch (e) {
    process.stderr.write(`\nagent bench: ${label} failed: ${(e as Error).message}\n`);
    return {
      case: c.kind,
      path: label,
      payload_B: c.payload,
      rate: c.rate === 0 ? "max" : c.rate,
      ...meaning,
      note: `failed: ${(e as Error).message}`,
    };
  }
}

function throughputCase(path: string, payload: number, o: AgentBenchOptions): CaseSpec {
  const guard = volumeGuard(payload);
  const chunk = pointsPerChunk(payload);
  const base = { kind: "throughput" as const, path, payload, rate: 0, guard, storedChunkBytes: chunk * payload };
  if (path.startsWith("ours/")) {
    const transport = path === "ours/quic" ? "quic" : "websocket";
    const ao: AgentCaseOptions = {
      transport,
      payload,
      rate: 0,
      durationS: o.durationS,
      maxPoints: guard,
      drainTimeoutS: drainS(o),
    };
    return { ...base, pointsPerMessage: chunk, run: (onProgress) => runAgentCase({ ...ao, onProgress }) };
  }
  const [peer, variant] = path.split("/") as [PeerName, string | undefined];
  const batch = variant === "batched" ? chunk : 1;
  return {
    ...base,
    pointsPerMessage: batch,
    run: (onProgress) =>
      runPeerCase({
        peer,
        payload,
        batch,
        durability: o.durability,
        rate: 0,
        durationS: o.durationS,
        maxPoints: guard,
        drainTimeoutS: drainS(o),
        onProgress,
      }),
  };
}

function latencyCases(o: AgentBenchOptions): CaseSpec[] {
  const durationS = Math.max(2, o.durationS); // the first second is warm-up, left out of the percentiles
  const perInterval = Math.ceil((LATENCY_RATE * FLUSH_MS) / 1000);
  const base = { kind: "latency" as const, payload: 16, rate: LATENCY_RATE, storedChunkBytes: perInterval * 16 };
  const cases: CaseSpec[] = [];
  for (const transport of ["websocket", "quic"] as const) {
    if (!o.paths.includes(`ours/${transport}`)) continue;
    const ao: AgentCaseOptions = {
      transport,
      payload: 16,
      rate: LATENCY_RATE,
      durationS,
      latency: true,
      drainTimeoutS: transport === "quic" ? 120 : undefined,
    };
    cases.push({
      ...base,
      path: `ours/${transport}`,
      pointsPerMessage: perInterval,
      run: (onProgress) => runAgentCase({ ...ao, onProgress }),
    });
    // The peers' clients publish each message at once; flush_policy immediately is our like-for-like setting.
    cases.push({
      ...base,
      path: `ours/${transport},flush=immediately`,
      pointsPerMessage: 1,
      run: (onProgress) => runAgentCase({ ...ao, flush: "immediately", onProgress }),
    });
  }
  for (const peer of ["mosquitto", "nats"] as const)
    if (o.paths.includes(peer))
      cases.push({
        ...base,
        path: peer,
        pointsPerMessage: 1,
        run: (onProgress) =>
          runPeerCase({
            peer,
            payload: 16,
            durability: o.durability,
            rate: LATENCY_RATE,
            durationS,
            latency: true,
            onProgress,
          }),
      });
  return cases;
}

export async function run(o: AgentBenchOptions = options()): Promise<{ rows: Row[] } & ReportExtras> {
  const load = loadAverage();
  process.stderr.write(
    `agent bench: load average ${load.join(" ")} at start; ${o.reps} repetition(s) of ${o.durationS} s per throughput case; CLOUD_DURABILITY=${o.durability}\n`,
  );
  if (load[0]! > LOAD_WARNING)
    process.stderr.write(
      `agent bench: WARNING: load average ${load[0]} is above ${LOAD_WARNING}: the machine is busy, these figures are not fit to quote\n`,
    );
  const rows: Row[] = [];
  for (const payload of o.payloads) {
    const ours = o.paths.filter((p) => p.startsWith("ours/")).map((p) => throughputCase(p, payload, o));
    const peers = o.paths.filter((p) => !p.startsWith("ours/")).map((p) => throughputCase(p, payload, o));
    const reps = new Map<string, Row[]>();
    for (let i = 0; i < o.reps; i++) {
      // Ours first in odd repetitions, the peers first in even ones: a drift in the machine's load hits both.
      for (const c of i % 2 === 0 ? [...ours, ...peers] : [...peers, ...ours]) {
        const row = await attempt(c, o.durability);
        (reps.get(c.path) ?? reps.set(c.path, []).get(c.path)!).push(row);
      }
    }
    for (const c of [...ours, ...peers]) rows.push(medianRow(reps.get(c.path)!));
  }
  if (o.latency) for (const c of latencyCases(o)) rows.push(await attempt(c, o.durability));
  const r = ratios(rows);
  return {
    rows,
    text: `load average at start: ${load.join(" ")}${load[0]! > LOAD_WARNING ? ` (above ${LOAD_WARNING}: busy machine)` : ""}\n\n${formatAgentTable(rows, r)}`,
    extra: {
      load_at_start: load,
      durability: o.durability,
      duration_s: o.durationS,
      reps: o.reps,
      ratios: r.ratios,
      not_compared: r.skipped,
    },
  };
}

if (isMain(import.meta.url)) {
  const got = await run();
  console.log(`results: ${report("agent", got.rows, got)}`);
}
