// `npm run lint`: every project rule, each run to the end so one report lists
// all violations; fails when any rule does. See CONTRIBUTING.md for the rules.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const jscpd = createRequire(import.meta.url).resolve("jscpd/run-jscpd.js");
const bin = (pkg, file) => path.resolve(import.meta.dirname, "..", "node_modules", pkg, file);
const CHECKS = [
  ["code lint (biome.json)", [bin("@biomejs/biome", "bin/biome"), "lint", "--colors=off", "."]],
  [
    "unused files, exports and dependencies (knip.json)",
    [bin("knip", "bin/knip.js"), "--no-progress", "--no-config-hints"],
  ],
  ["imports (.dependency-cruiser.cjs)", ["scripts/check-imports.mjs"]],
  ["SQL only in repositories", ["scripts/check-sql.mjs"]],
  ["files at most 400 lines", ["scripts/check-file-size.mjs"]],
  ["no repeated code (.jscpd.json)", [jscpd, "--no-colors", "."]],
];

const failed = [];
for (const [name, args] of CHECKS) {
  console.log(`# ${name}`);
  const run = spawnSync(process.execPath, args, { stdio: "inherit" });
  if (run.status !== 0) failed.push(name);
}
// The formatter (biome.json): `npm run format` writes what this checks.
{
  console.log("# formatting (biome.json)");
  const run = spawnSync(process.execPath, [bin("@biomejs/biome", "bin/biome"), "format", "--colors=off", "."], {
    stdio: "inherit",
  });
  if (run.status !== 0) failed.push("formatting");
}
if (failed.length > 0) {
  console.log(`\nlint failed: ${failed.join("; ")}`);
  process.exitCode = 1;
} else {
  console.log("\nlint passed");
}
