// Shared by every benchmark: print rows as a table and keep them as JSON under bench/results/.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export type Row = Record<string, unknown>;

/** bench/results/, or BENCH_RESULTS_DIR (tests write there, not over a real run's results). */
const resultsDir = () =>
  process.env.BENCH_RESULTS_DIR ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "results");

/** What a benchmark may give besides its rows: its own printed form, and more fields for the JSON file. */
export interface ReportExtras {
  text?: string;
  extra?: Record<string, unknown>;
}

export function report(name: string, rows: Row[], opts: ReportExtras = {}): string {
  console.log(`\n== ${name} ==`);
  if (opts.text !== undefined) console.log(opts.text);
  else console.table(rows);
  fs.mkdirSync(resultsDir(), { recursive: true });
  const file = path.join(resultsDir(), `${name}.json`);
  const machine = {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    node: process.version,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
  };
  fs.writeFileSync(file, JSON.stringify({ name, at: new Date().toISOString(), machine, ...opts.extra, rows }, null, 2));
  return file;
}

/** True when the calling module is the process entry (run standalone with tsx). */
export const isMain = (metaUrl: string) =>
  process.argv[1] !== undefined && pathToFileURL(path.resolve(process.argv[1])).href === metaUrl;

/** The value of `--name V` or `--name=V` on the command line (a benchmark's option), undefined when absent. */
export function arg(name: string): string | undefined {
  const argv = process.argv;
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  return argv[i]!.includes("=") ? argv[i]!.slice(argv[i]!.indexOf("=") + 1) : argv[i + 1];
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU seconds of a process, from /proc/<pid>/stat (fields 14 and 15). */
export function procCpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** Whether a row is a case that failed: the benchmarks put "failed: <why>" in its note. */
export const rowFailed = (r: Row): boolean => typeof r.note === "string" && r.note.startsWith("failed:");

/** A case's name from its row's identifying fields (e.g. "ours, 100 × 1000", "postgres, 2 instances", "throughput, nats, 16 B"). */
export function caseLabel(r: Row): string {
  const parts: string[] = [];
  for (const k of ["case", "system", "path", "backend"]) if (r[k] !== undefined) parts.push(String(r[k]));
  if (r.instances !== undefined) parts.push(`${String(r.instances)} instance(s)`);
  if (r.edges !== undefined) parts.push(`${String(r.edges)} × ${String(r.rate_per_edge)}`);
  if (r.payload_B !== undefined) parts.push(`${String(r.payload_B)} B`);
  if (r.rate !== undefined) parts.push(`at ${String(r.rate)}`);
  return parts.join(", ") || JSON.stringify(r).slice(0, 80);
}
