// `npm test`: the type-check (both projects), the lint and the whole vitest suite. The checks run beside the
// tests rather than before them: the tests wait on child processes, browsers and timers much of the time, and
// the checks take that idle CPU (a minute or two of a quiet two-core machine saved). The checks' output is kept
// and printed after the tests'; the run fails when either part fails. Extra arguments go to vitest.
import { spawn } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const bin = (...p) => path.join(root, "node_modules", ...p);
// The type-checks keep tsc's incremental state in .tmp/ (the same files as `npm run test:quick`): a run after a small
// change checks what changed (a few seconds) instead of the whole program (about 30 CPU-seconds).
const tsc = (project, info) => [
  bin("typescript", "bin", "tsc"),
  "--noEmit",
  "-p",
  project,
  "--incremental",
  "--tsBuildInfoFile",
  path.join(".tmp", info),
];
const CHECKS = [
  ["type-check", tsc(".", "tsc-main.tsbuildinfo")],
  ["type-check of the console", tsc("cloud/console/web", "tsc-web.tsbuildinfo")],
  ["lint", [path.join(root, "scripts", "lint.mjs")]],
];
const VITEST = [
  bin("vitest", "vitest.mjs"),
  "run",
  "--project",
  "sqlite",
  "--project",
  "postgres",
  "--project",
  "quick",
];

/** Runs the checks one after another, keeping their output; resolves to the names of those that failed. */
async function checks(out) {
  const failed = [];
  for (const [name, args] of CHECKS) {
    const code = await new Promise((resolve) => {
      const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
      out.push(`# ${name}\n`);
      child.stdout.on("data", (c) => out.push(String(c)));
      child.stderr.on("data", (c) => out.push(String(c)));
      child.on("exit", (c) => resolve(c ?? 1));
    });
    if (code !== 0) failed.push(name);
  }
  return failed;
}

const out = [];
const checked = checks(out);
const vitest = spawn(process.execPath, [...VITEST, ...process.argv.slice(2)], { cwd: root, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => vitest.kill(signal));
const tested = new Promise((resolve) => vitest.on("exit", (code) => resolve(code ?? 1)));
const [failed, testCode] = await Promise.all([checked, tested]);
process.stdout.write(`\n${out.join("")}`);
if (failed.length > 0) console.log(`\nnpm test: failed: ${failed.join("; ")}`);
process.exitCode = failed.length > 0 || testCode !== 0 ? 1 : 0;
