// The chaos soak (`npm run bench -- soak`): the real edge agent (bin/edge-agent.mjs, fed through its FIFO by the
// sample connector) and the cloud peer under a steady load, with faults injected on a schedule: the cloud killed
// (SIGKILL) and started again, the connection cut by a TCP proxy (WebSocket), the cloud's disk full (SQLite),
// PostgreSQL and NATS stopped and started (PostgreSQL: two cloud instances on one database and one NATS, the
// agent on the first, the viewer on the second), the cloud's TLS pair renewed (SIGHUP), the agent restarted. One
// row per transport and backend (docs/security.md, "Chaos soak"):
// points sent, accepted, acknowledged, stored, lost, duplicated, crashes, the live gap at a downstream viewer
// after each fault, every process's RSS and descriptor slope (bench/soak/). Targets: bench/soak/report.ts.
//   npm run bench -- soak [--matrix | --transport websocket|quic|both --backend sqlite|postgres|both]
//     [--duration 3600] [--rate N (default: half the maximum, measured first, at most 10000)] [--recover 15] [--hold 5]
//     [--faults cloud-kill,proxy-cut,...] [--warmup 120] [--sample 5] [--drain 120] [--judge-slopes-from 1800]
import { runAgentCase } from "../runtime/device-bench/agent-case.js";
import { isMain, report, type ReportExtras, type Row } from "./lib.js";
import { options, rowName, type SoakOptions } from "./soak/options.js";
import { text, toRow } from "./soak/report.js";
import { runRow, type RowResult } from "./soak/row.js";

/** The default rate's bound: every point is read back at the end, and the SQLite rows keep the cloud's data in memory (tmpfs). */
const MAX_DEFAULT_RATE = 10_000;

/** Half the agent path's maximum rate on this machine (WebSocket, SQLite, 16-byte points, 10 s). */
async function halfMaxRate(): Promise<number> {
  const r = await runAgentCase({ transport: "websocket", payload: 16, rate: 0, durationS: 10 });
  process.stderr.write(
    `soak: the maximum is ${r.pointsPerS} points/s; the soak runs at half of it, at most ${MAX_DEFAULT_RATE}\n`,
  );
  return Math.min(MAX_DEFAULT_RATE, Math.max(1, Math.round(r.pointsPerS / 2)));
}

export async function run(o: SoakOptions = options()): Promise<{ rows: Row[] } & ReportExtras> {
  const rate = o.rate ?? (await halfMaxRate());
  const results: RowResult[] = [];
  const rows: Row[] = [];
  for (const spec of o.rows) {
    try {
      const r = await runRow(spec, o, rate);
      results.push(r);
      rows.push(toRow(r, o));
    } catch (e) {
      rows.push({ path: rowName(spec), rate, note: `failed: ${(e as Error).stack ?? e}` });
    }
  }
  const failedRows = rows.filter((r) => !results.some((x) => x.row === r.path));
  const extraText = failedRows.map((r) => `${String(r.path)}: ${String(r.note)}`);
  return { rows, text: [text(results, o), ...extraText].join("\n"), extra: { options: { ...o, rate } } };
}

if (isMain(import.meta.url)) {
  const got = await run();
  console.log(`results: ${report("soak", got.rows, got)}`);
}
