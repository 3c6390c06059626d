// `npm run bench [-- name ...]`: runs the named benchmarks (all when none is named), one after another.
import { report, type Row } from "./lib.js";

const benches: Record<string, string> = {
  codec: "./codec.js",
  token: "./token.js",
  access: "./access.js",
  queue: "./queue.js",
  broker: "./broker.js",
  agent: "./agent.js",
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith("-"));
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
    const mod = (await import(file)) as { run(): Promise<Row[]> };
    const rows = await mod.run();
    console.log(`results: ${report(name, rows)}`);
  } catch (err) {
    console.error(`benchmark ${name} failed: ${(err as Error).stack ?? err}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
