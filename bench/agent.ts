// End to end: sample connector -> FIFO -> agent (LMDB) -> iSCP (WebSocket, QUIC) -> cloud peer -> SQLite,
// and the same data through mosquitto (QoS 1, persistence) and NATS JetStream (file storage), for 16 B,
// 1 KiB and 64 KiB payloads as fast as possible, then latency at 10,000 points/s with 16 B payloads (ours with the
// default flush_policy, interval 5 ms, and with flush_policy immediately, as the peers' clients publish).
//   npm run bench -- agent [--duration S]     (or: npx tsx bench/agent.ts [--duration S]; default 3 s per case)
// The cloud peer runs with CLOUD_DURABILITY from the environment (default power-loss); our rows name it.
// Our rows carry ratio_vs_mosquitto / ratio_vs_nats: ours ÷ theirs for the metric named in ratio_of (points/s
// for throughput rows, > 1 = ahead; p50 latency for latency rows, < 1 = ahead). Process columns: connector,
// edge (our agent / the peer's producer), server (our cloud peer / the broker), consumer (the peer's subscriber).
import { runAgentCase, type AgentCaseOptions, type CaseResult } from "../runtime/bench/agent-case.js";
import type { Progress } from "../runtime/bench/drive.js";
import { loadAverage } from "../runtime/bench/proc-stats.js";
import { caseRow } from "../runtime/bench/table.js";
import { parseDurability } from "../cloud/config.js";
import { isMain, report, type Row } from "./lib.js";
import { runPeerCase, type PeerName } from "./peers/peer-case.js";

const PAYLOADS = [16, 1024, 64 * 1024];
const LATENCY_RATE = 10_000;
/** At most 512 MiB of payload per case (disk and drain time of 64 KiB payloads). */
const volumeCap = (payload: number) => Math.floor((512 * 2 ** 20) / payload);

function durationArg(): number {
  const argv = process.argv;
  const i = argv.findIndex((a) => a === "--duration" || a.startsWith("--duration="));
  const v = i < 0 ? process.env.BENCH_DURATION : argv[i]!.includes("=") ? argv[i]!.split("=")[1] : argv[i + 1];
  const n = Number(v ?? 3);
  if (!(n > 0)) throw new Error(`--duration must be a positive number of seconds, not ${v}`);
  return n;
}

function progress(label: string) {
  const tty = process.stderr.isTTY;
  return (p: Progress) => {
    const line = `  ${label}: ${p.elapsedS.toFixed(0)} s, ${p.stored} points${p.sent !== undefined ? ` of ${p.sent}` : ""}, ${Math.round(p.rate)} points/s`;
    process.stderr.write(tty ? `\r${line}\u001b[K` : `${line}\n`);
  };
}

interface Outcome {
  kind: "throughput" | "latency";
  result?: CaseResult;
  row: Row;
}

async function attempt(kind: Outcome["kind"], label: string, payload: number, rate: number, fn: (onProgress: (p: Progress) => void) => Promise<CaseResult>): Promise<Outcome> {
  process.stderr.write(`agent bench: ${label}, ${payload} B, ${rate === 0 ? "as fast as possible" : `${rate} points/s`}\n`);
  try {
    const result = await fn(progress(label));
    if (process.stderr.isTTY) process.stderr.write("\n");
    const durability = label.startsWith("ours/") ? { durability: parseDurability(process.env.CLOUD_DURABILITY) } : {};
    return { kind, result, row: { case: kind, ...caseRow(result, { roles: true }), ...durability, load1: loadAverage()[0] } };
  } catch (e) {
    process.stderr.write(`\nagent bench: ${label} failed: ${(e as Error).message}\n`);
    return { kind, row: { case: kind, path: label, payload_B: payload, rate: rate === 0 ? "max" : rate, note: `failed: ${(e as Error).message}` } };
  }
}

const ours = (o: AgentCaseOptions) => (onProgress: (p: Progress) => void) => runAgentCase({ ...o, onProgress });
const peer = (name: PeerName, payload: number, rate: number, durationS: number, latency: boolean) => (onProgress: (p: Progress) => void) =>
  runPeerCase({ peer: name, payload, rate, durationS, latency, maxPoints: volumeCap(payload), onProgress });

/** ratio_vs_* on our rows: ours ÷ the peer's same case. */
function addRatios(outcomes: Outcome[]): void {
  for (const o of outcomes) {
    if (!o.result || !o.result.path.startsWith("ours/")) continue;
    const metric = o.kind === "throughput" ? (r: CaseResult) => r.pointsPerS : (r: CaseResult) => r.latency?.p50Ms ?? NaN;
    o.row.ratio_of = o.kind === "throughput" ? "points/s" : "p50 latency";
    for (const name of ["mosquitto", "nats"]) {
      const theirs = outcomes.find((x) => x.kind === o.kind && x.result?.path === name && x.result.payloadB === o.result!.payloadB)?.result;
      const v = theirs ? metric(o.result) / metric(theirs) : NaN;
      o.row[`ratio_vs_${name}`] = Number.isFinite(v) ? +v.toFixed(2) : undefined;
    }
  }
}

export async function run(): Promise<Row[]> {
  const durationS = durationArg();
  parseDurability(process.env.CLOUD_DURABILITY); // a bad value stops the run before its first case
  const outcomes: Outcome[] = [];
  for (const payload of PAYLOADS) {
    const cap = volumeCap(payload);
    outcomes.push(await attempt("throughput", "ours/websocket", payload, 0, ours({ transport: "websocket", payload, rate: 0, durationS, maxPoints: cap })));
    outcomes.push(await attempt("throughput", "ours/quic", payload, 0, ours({ transport: "quic", payload, rate: 0, durationS, maxPoints: cap, drainTimeoutS: 120 })));
    for (const name of ["mosquitto", "nats"] as const) outcomes.push(await attempt("throughput", name, payload, 0, peer(name, payload, 0, durationS, false)));
  }
  const latencyS = Math.max(4, durationS); // the first second is warm-up, left out of the percentiles
  outcomes.push(await attempt("latency", "ours/websocket", 16, LATENCY_RATE, ours({ transport: "websocket", payload: 16, rate: LATENCY_RATE, durationS: latencyS, latency: true })));
  // The peers' clients publish each message at once; flush_policy immediately is our like-for-like setting.
  const label = "ours/websocket,flush=immediately";
  outcomes.push(await attempt("latency", label, 16, LATENCY_RATE, ours({ transport: "websocket", payload: 16, rate: LATENCY_RATE, durationS: latencyS, latency: true, flush: "immediately" })));
  outcomes.push(await attempt("latency", "ours/quic", 16, LATENCY_RATE, ours({ transport: "quic", payload: 16, rate: LATENCY_RATE, durationS: latencyS, latency: true, drainTimeoutS: 120 })));
  outcomes.push(await attempt("latency", "ours/quic,flush=immediately", 16, LATENCY_RATE, ours({ transport: "quic", payload: 16, rate: LATENCY_RATE, durationS: latencyS, latency: true, flush: "immediately", drainTimeoutS: 120 })));
  for (const name of ["mosquitto", "nats"] as const) outcomes.push(await attempt("latency", name, 16, LATENCY_RATE, peer(name, 16, LATENCY_RATE, latencyS, true)));
  addRatios(outcomes);
  return outcomes.map((o) => o.row);
}

if (isMain(import.meta.url)) {
  const rows = await run();
  console.log(`results: ${report("agent", rows)}`);
}
