// `npm run bench [-- name ...]`: runs the named benchmarks (all when none is named), one after another.
import { report, type ReportExtras, type Row } from "./lib.js";

const benches: Record<string, string> = {
  codec: "./codec.js",
  token: "./token.js",
  access: "./access.js",
  queue: "./queue.js",
  broker: "./broker.js",
  agent: "./agent.js",
  edges: "./edges.js",
  "scale-out": "./scale-out.js",
  steady: "./steady.js",
  startup: "./startup.js",
  console: "./console.js",
};

// Names are the bare words; `--flag value` pairs (e.g. `--duration 20`) belong to the benchmarks.
const args = process.argv.slice(2);
const wanted = args.filter((a, i) => !a.startsWith("-") && !(i > 0 && /^--[^=]+$/.test(args[i - 1]!) && !(a in benches)));
const names = wanted.length ? wanted : Object.keys(benches);
let failed = 0;
for (const name of names) {
  const file = benches[name];
  if (!file) {
    console.error(`unknown benchmark "${name}"; known: ${Object.keys(benches).join(", ")}`);
    failed++;
    continue;
  }
  try {
    // A benchmark returns its rows, or its rows with its own printed form and JSON fields (agent.ts).
    const mod = (await import(file)) as { run(): Promise<Row[] | ({ rows: Row[] } & ReportExtras)> };
    const got = await mod.run();
    console.log(`results: ${Array.isArray(got) ? report(name, got) : report(name, got.rows, got)}`);
  } catch (err) {
    console.error(`benchmark ${name} failed: ${(err as Error).stack ?? err}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
