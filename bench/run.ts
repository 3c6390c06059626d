// `npm run bench [-- name ...]`: runs the named benchmarks (all when none is named), one after another.
// Benchmarks that start our commands get dist/ built first when it is missing or stale (--no-build: never).
// Exits non-zero when a benchmark or any of its cases failed, naming each, after the tables are printed.
import { ensureBuilt } from "./build-check.js";
import { caseLabel, report, rowFailed, type ReportExtras, type Row } from "./lib.js";

const benches: Record<string, string> = {
  codec: "./codec.js",
  token: "./token.js",
  access: "./access.js",
  queue: "./queue.js",
  broker: "./broker.js",
  compression: "./compression.js",
  agent: "./agent.js",
  edges: "./edges.js",
  "scale-out": "./scale-out.js",
  steady: "./steady.js",
  soak: "./soak.js",
  "soak-memory": "./soak-memory.js",
  startup: "./startup.js",
  console: "./console.js",
};
/** The benchmarks that run bin/*.mjs, which load the compiled code under dist/. */
const COMPILED = new Set(["agent", "edges", "scale-out", "steady", "soak", "soak-memory", "startup"]);

// Names are the bare words; `--flag value` pairs (e.g. `--duration 20`) belong to the benchmarks.
const args = process.argv.slice(2);
const wanted = args.filter(
  (a, i) => !a.startsWith("-") && !(i > 0 && /^--[^=]+$/.test(args[i - 1]!) && !(a in benches)),
);
const names = wanted.length ? wanted : Object.keys(benches);
const unknown = names.filter((n) => !(n in benches));
if (unknown.length) {
  console.error(
    `unknown benchmark ${unknown.map((n) => `"${n}"`).join(", ")}; known: ${Object.keys(benches).join(", ")}`,
  );
  process.exit(2);
}
if (!args.includes("--no-build") && names.some((n) => COMPILED.has(n))) ensureBuilt();

const failures: string[] = [];
for (const name of names) {
  try {
    // A benchmark returns its rows, or its rows with its own printed form and JSON fields (agent.ts).
    const mod = (await import(benches[name]!)) as { run(): Promise<Row[] | ({ rows: Row[] } & ReportExtras)> };
    const got = await mod.run();
    const rows = Array.isArray(got) ? got : got.rows;
    console.log(`results: ${Array.isArray(got) ? report(name, got) : report(name, got.rows, got)}`);
    for (const r of rows.filter(rowFailed)) failures.push(`${name}: ${caseLabel(r)}: ${String(r.note).split("\n")[0]}`);
  } catch (err) {
    console.error(`benchmark ${name} failed: ${(err as Error).stack ?? err}`);
    failures.push(`${name}: the whole benchmark: ${(err as Error).message}`);
  }
}
if (failures.length) {
  console.error(`\nbench: ${failures.length} case(s) failed:\n${failures.map((f) => `  ${f}`).join("\n")}`);
  process.exit(1);
}
process.exit(0);
