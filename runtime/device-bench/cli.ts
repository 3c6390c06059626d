// `edge-agent bench`: sizes a device before deploying it. The real path (sample connector -> FIFO -> agent
// -> iSCP -> cloud storage) against a configured cloud (--server) or a cloud peer started on a temp dir.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { open } from "lmdb";
import {
  runAgentCase,
  type AgentCaseOptions,
  type CaseResult,
  type RemoteServer,
  type Transport,
} from "./agent-case.js";
import { loadAverage } from "./proc-stats.js";
import { caseRow, formatTable, narrowTable } from "./table.js";
import { loadWarning, verdictLines, wrap } from "./verdict.js";

export const BENCH_USAGE =
  "Usage: edge-agent bench [options]\n\n" +
  "Sends points from the sample connector through a FIFO, this agent (LMDB queue) and iSCP into the cloud's\n" +
  "storage, and prints points/s, MB/s (payload bytes), latency p50/p99 (FIFO write to storage) and CPU/RSS,\n" +
  "then a verdict: the rate this device sustains (and whether it meets --target-rate).\n\n" +
  "Options:\n" +
  "  --server <url>          a configured cloud (default: a cloud peer started on a temp dir for the run)\n" +
  "  --duration <s>          seconds the connector writes (default: 10)\n" +
  "  --payload <bytes>       payload size (default: 16; 16 or more carry a sequence number and the write time)\n" +
  "  --rate <n>              points/s; 0 (default) = as fast as possible, then a latency run at 10,000 points/s\n" +
  "                          (or half the measured rate, when that is lower); n > 0 = one run at n points/s\n" +
  "  --transport <t>         websocket (default) or quic\n" +
  "  --max-points <n>        stop the connector after n points (default: no cap)\n" +
  "  --flush <policy>        the upstream's flush_policy: interval (default, every 5 ms) or immediately\n" +
  "  --target-rate <n>       points/s the device must sustain: says whether it does, and with what margin\n" +
  "  --wide                  every column (CPU and memory of each process, points, seconds, notes); by default\n" +
  "                          the table fits 100 columns\n" +
  "  --edge-uuid <uuid>, --client-secret <secret>, --project-uuid <uuid>\n" +
  "                          with --server: the edge's credentials (env AGENT_BENCH_EDGE_UUID,\n" +
  "                          AGENT_BENCH_CLIENT_SECRET, AGENT_BENCH_PROJECT_UUID); else the connection settings of\n" +
  "                          the agent's data directory\n" +
  '  -d, --data <dir>        that data directory (env AGENT_DATA) (default: "./data/agent")\n' +
  "  -h, --help              display help for command\n\n" +
  "The benchmark runs its own agent on a temp dir: it does not touch a running agent or its data. With --server\n" +
  "the run is a measurement of that edge in the project, and stays there like any other.\n";

/**
 * `--client-secret <secret>` as `--client-secret=<secret>`: a secret is never an option, but one issued before
 * secrets stopped starting with "-" would otherwise be refused as an ambiguous argument.
 */
function secretJoined(argv: string[]): string[] {
  const at = argv.indexOf("--client-secret");
  if (at < 0 || at + 1 >= argv.length) return argv;
  return [...argv.slice(0, at), `--client-secret=${argv[at + 1]}`, ...argv.slice(at + 2)];
}

/** The connection settings stored by an agent in `dataDir`, read without writing (a daemon may be running). */
function storedConnection(
  dataDir: string,
): Partial<{ server_url: string; project_uuid: string; edge_uuid: string; client_secret: string }> {
  const file = path.join(dataDir, "settings", "settings.lmdb");
  if (!fs.existsSync(file)) return {};
  const root = open({ path: file, readOnly: true, maxDbs: 16, compression: false });
  try {
    return (root.openDB<Record<string, string>, string>({ name: "singletons" }).get("connection") ?? {}) as Record<
      string,
      string
    >;
  } finally {
    void root.close();
  }
}

/** The latency run's rate after an as-fast-as-possible run that reached `maxRate` points/s. */
export function latencyRate(maxRate: number): number {
  return Math.max(1, Math.min(10_000, Math.floor(maxRate / 2)));
}

export async function benchMain(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: secretJoined(argv),
      options: {
        server: { type: "string" },
        duration: { type: "string", default: "10" },
        payload: { type: "string", default: "16" },
        rate: { type: "string", default: "0" },
        transport: { type: "string", default: "websocket" },
        "max-points": { type: "string", default: "0" },
        flush: { type: "string", default: "interval" },
        "target-rate": { type: "string" },
        wide: { type: "boolean", default: false },
        "edge-uuid": { type: "string" },
        "client-secret": { type: "string" },
        "project-uuid": { type: "string" },
        data: { type: "string", short: "d" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (e) {
    process.stderr.write(`edge-agent bench: ${(e as Error).message}\n${BENCH_USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(BENCH_USAGE);
    return 0;
  }
  const durationS = Number(values.duration);
  const payload = Number(values.payload);
  const rate = Number(values.rate);
  const maxPoints = Number(values["max-points"]);
  const transport = values.transport as Transport;
  const targetRate = values["target-rate"] === undefined ? undefined : Number(values["target-rate"]);
  const bad = [
    !(durationS > 0) && "--duration must be a positive number",
    !(Number.isInteger(payload) && payload >= 1 && payload <= 16 * 1024 * 1024) && "--payload must be 1..16777216",
    !(Number.isFinite(rate) && rate >= 0) && "--rate must be 0 or more",
    !(Number.isInteger(maxPoints) && maxPoints >= 0) && "--max-points must be 0 or more",
    transport !== "websocket" && transport !== "quic" && "--transport must be websocket or quic",
    values.flush !== "interval" && values.flush !== "immediately" && "--flush must be interval or immediately",
    targetRate !== undefined &&
      !(targetRate > 0 && Number.isFinite(targetRate)) &&
      "--target-rate must be a positive number",
  ].filter(Boolean);
  if (bad.length) {
    process.stderr.write(`edge-agent bench: ${bad.join("; ")}\n`);
    return 2;
  }
  let server: RemoteServer | undefined;
  if (values.server) {
    const stored = storedConnection(path.resolve(values.data ?? process.env.AGENT_DATA ?? "./data/agent"));
    server = {
      url: values.server,
      projectUuid: values["project-uuid"] ?? process.env.AGENT_BENCH_PROJECT_UUID ?? stored.project_uuid ?? "",
      edgeUuid: values["edge-uuid"] ?? process.env.AGENT_BENCH_EDGE_UUID ?? stored.edge_uuid ?? "",
      clientSecret: values["client-secret"] ?? process.env.AGENT_BENCH_CLIENT_SECRET ?? stored.client_secret ?? "",
    };
    const missing = Object.entries({
      "--project-uuid": server.projectUuid,
      "--edge-uuid": server.edgeUuid,
      "--client-secret": server.clientSecret,
    })
      .filter(([, v]) => !v)
      .map(([k]) => k);
    if (missing.length) {
      process.stderr.write(
        `edge-agent bench: --server needs the edge's credentials: ${missing.join(", ")} (or the agent's stored connection settings)\n`,
      );
      return 2;
    }
  }
  const tty = process.stderr.isTTY;
  // Taken before the run starts its own processes: what else keeps this machine busy.
  const busy = loadWarning(os.loadavg()[0]!, os.availableParallelism());
  if (busy) process.stderr.write(`edge-agent bench: ${busy}\n`);
  const flush = values.flush as "interval" | "immediately";
  const cases: AgentCaseOptions[] =
    rate > 0
      ? [{ transport, payload, rate, durationS, maxPoints, latency: true, server, flush }]
      : [{ transport, payload, rate: 0, durationS, maxPoints, server, flush }];
  const results: CaseResult[] = [];
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]!;
    const what = `${c.transport}, ${c.payload} B, ${c.rate === 0 ? "as fast as possible" : `${c.rate} points/s`}`;
    process.stderr.write(
      `edge-agent bench: ${what}, ${c.durationS} s${server ? ` against ${server.url}` : " against a local cloud peer"}\n`,
    );
    try {
      results.push(
        await runAgentCase({
          ...c,
          onProgress: (p) => {
            const line = `  ${p.elapsedS.toFixed(0)} s: ${p.stored} points stored${p.sent !== undefined ? ` of ${p.sent}` : ""}, ${Math.round(p.rate)} points/s`;
            process.stderr.write(tty ? `\r${line}\u001b[K` : `${line}\n`);
          },
        }),
      );
      if (tty) process.stderr.write("\n");
      // After the as-fast-as-possible run, latency at a rate the path sustains: 10,000 points/s, or half the
      // measured rate when that is lower (64 KiB payloads at 10,000/s would only measure a growing queue).
      if (rate === 0 && i === 0)
        cases.push({
          ...c,
          rate: latencyRate(results[0]!.pointsPerS),
          durationS: Math.min(durationS, 10),
          latency: true,
        });
    } catch (e) {
      process.stderr.write(`\nedge-agent bench: ${(e as Error).message}\n`);
      return 1;
    }
  }
  const rows = results.map((r) => caseRow(r));
  process.stdout.write(`\n${values.wide ? formatTable(rows) : narrowTable(rows)}\n\n`);
  const verdict = verdictLines(results, { transport, flush, server: server?.url, targetRate });
  const legend = `load average ${loadAverage().join(" ")} (${os.availableParallelism()} cores); MB = 10^6 payload bytes; CPU in % of one core`;
  const footer = [...verdict, ...(busy ? [busy] : []), legend];
  process.stdout.write(`${footer.flatMap((l) => wrap(l)).join("\n")}\n`);
  return results.every((r) => r.stored > 0) ? 0 : 1;
}
