#!/usr/bin/env node
// Runs the tests that need no browser or database on other Node lines than the one installed (Node 20):
// fetches the newest build of each line from the npm registry (the `node-linux-<arch>` packages), caches it
// outside the checkout, and with it (1) loads the native modules this checkout installed, (2) runs vitest on the
// folders below, (3) starts the compiled agent and asks it `agentctl version`.
//   node scripts/node-lines.mjs [line...]      (default: 22 24; NODE_LINES_CACHE overrides the cache folder)
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const LINES = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["22", "24"];
const CACHE =
  process.env.NODE_LINES_CACHE ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "measure-edge-cloud");
const PACKAGE = `node-linux-${process.arch}`;
// Protocol codecs, lifecycle machines and the agent's command API, filters, FIFOs, connector formats, LMDB queue
// and the stages that feed and drain it.
const TEST_DIRS = [
  "tests/proto",
  "tests/machines",
  "tests/runtime/api",
  "tests/runtime/filters",
  "tests/runtime/ipc",
  "tests/runtime/queue",
  "tests/runtime/datapath/batcher-cursor.test.ts",
  "tests/runtime/deferred/store-data-chunks.test.ts",
  "tests/runtime/settings",
];

const byVersion = (a, b) => {
  const [x, y] = [a, b].map((v) => v.split(".").map(Number));
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
};
const binaryOf = (version) => path.join(CACHE, `node-${version}`, "node_modules", PACKAGE, "bin", "node");
const cachedVersions = (line) =>
  (fs.existsSync(CACHE) ? fs.readdirSync(CACHE) : [])
    .map((d) => d.replace(/^node-/, ""))
    .filter((v) => v.startsWith(`${line}.`) && fs.existsSync(binaryOf(v)))
    .sort(byVersion);

/** The newest release of `line` on the registry; offline, the newest one already cached. */
function newest(line) {
  const asked = spawnSync("npm", ["view", `${PACKAGE}@${line}`, "version", "--json"], { encoding: "utf8" });
  if (asked.status === 0) {
    const answer = JSON.parse(asked.stdout);
    return [answer].flat().sort(byVersion).at(-1);
  }
  const cached = cachedVersions(line).at(-1);
  if (cached) return cached;
  throw new Error(`node ${line}: the registry did not answer and nothing is cached (${asked.stderr.trim()})`);
}

/** The node binary of `version`, installed into the cache once. */
function install(version) {
  const binary = binaryOf(version);
  if (fs.existsSync(binary)) return binary;
  const prefix = path.join(CACHE, `node-${version}`);
  console.log(`node-lines: fetching ${PACKAGE}@${version} into ${prefix}`);
  execFileSync(
    "npm",
    [
      "install",
      "--prefix",
      prefix,
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      `${PACKAGE}@${version}`,
    ],
    { stdio: "inherit" },
  );
  return binary;
}

// Each native module loaded and used once: N-API builds load on every Node line without a rebuild.
const NATIVE_CHECK = `
import { createRequire } from "node:module";
import fs from "node:fs"; import os from "node:os"; import path from "node:path";
const require = createRequire(path.join(process.cwd(), "package.json"));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "node-lines-"));
try {
  const { open } = require("lmdb");
  const db = open({ path: dir });
  await db.put("k", { v: 1 });
  if (db.get("k")?.v !== 1) throw new Error("lmdb: read back a different value");
  await db.close();
  if (typeof require("msgpackr-extract").extractStrings !== "function") throw new Error("msgpackr-extract: no native decoder");
  const sqlite3 = require("sqlite3");
  const version = await new Promise((ok, fail) => {
    const s = new sqlite3.Database(":memory:");
    s.get("select sqlite_version() as v", (e, row) => s.close(() => (e ? fail(e) : ok(row.v))));
  });
  const masked = Buffer.alloc(4);
  require("bufferutil").mask(Buffer.from([1, 2, 3, 4]), Buffer.from([1, 1, 1, 1]), masked, 0, 4);
  if (masked[3] !== 5) throw new Error("bufferutil: wrong mask");
  console.log("native modules: lmdb, msgpackr-extract, sqlite3 (SQLite " + version + "), bufferutil load on " + process.version);
} finally { fs.rmSync(dir, { recursive: true, force: true }); }
`;

function run(node, args, env = {}) {
  const r = spawnSync(node, args, {
    cwd: ROOT,
    stdio: "inherit",
    env: { ...process.env, PATH: `${path.dirname(node)}:${process.env.PATH}`, ...env },
  });
  if (r.status !== 0)
    throw new Error(`${path.basename(node)} ${args.slice(0, 2).join(" ")} ... exited with ${r.status ?? r.signal}`);
}

/** The compiled agent started on `node`, asked `agentctl version` until it answers, then stopped. */
async function agentAnswers(node) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "node-lines-agent-"));
  const socket = path.join(dir, "agent.sock");
  const agent = spawn(
    node,
    ["bin/edge-agent.mjs", "--socket", socket, "--data", path.join(dir, "data"), "--log-level", "warn"],
    { cwd: ROOT, stdio: "inherit" },
  );
  const exited = new Promise((resolve) => agent.once("exit", (code, signal) => resolve(code ?? signal)));
  try {
    for (const until = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 250))) {
      if (agent.exitCode !== null) throw new Error(`edge-agent exited with ${agent.exitCode} on ${node}`);
      const r = spawnSync(node, ["bin/agentctl.mjs", "version"], {
        cwd: ROOT,
        encoding: "utf8",
        env: { ...process.env, AGENT_SOCKET: socket },
      });
      if (r.status === 0) return console.log(`edge-agent answers agentctl version: ${r.stdout.trim()}`);
      if (Date.now() > until)
        throw new Error(`edge-agent did not answer agentctl version within 60 s: ${r.stderr.trim()}`);
    }
  } finally {
    agent.kill("SIGTERM");
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const failed = [];
for (const line of LINES) {
  try {
    const node = install(newest(line));
    console.log(`\nnode-lines: Node ${line} (${execFileSync(node, ["--version"], { encoding: "utf8" }).trim()})`);
    run(node, ["--input-type=module", "-e", NATIVE_CHECK]);
    run(node, ["node_modules/vitest/vitest.mjs", "run", "--project", "sqlite", "--project", "quick", ...TEST_DIRS]);
    await agentAnswers(node);
  } catch (e) {
    console.error(`node-lines: Node ${line}: ${e.message}`);
    failed.push(line);
  }
}
if (failed.length > 0) {
  console.error(`node-lines: failed on Node ${failed.join(", ")}`);
  process.exit(1);
}
console.log(`node-lines: passed on Node ${LINES.join(", ")}`);
