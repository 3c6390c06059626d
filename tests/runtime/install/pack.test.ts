// The package as a user installs it: `npm pack`, then `npm install --omit=dev <tarball>` in a fresh
// directory. The installed bins run the compiled code (the edge agent starts and answers agentctl), and
// nothing of the development toolchain or the test-only blockchain libraries is installed.
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ApiClient } from "../../../runtime/cli/client.js";
import { stopChild } from "../../../runtime/bench/children.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const run = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pack-"));
const app = path.join(dir, "app");
const bin = (name: string) => path.join(app, "node_modules", ".bin", name);
const npm = (args: string[], cwd: string) => run("npm", args, { cwd, maxBuffer: 64 << 20, env: { ...process.env, npm_config_update_notifier: "false" } });

beforeAll(async () => {
  // dist/ is fresh (the global setup built it), so pack's own build step is skipped.
  const packed = await npm(["pack", "--ignore-scripts", "--json", "--pack-destination", dir], ROOT);
  const tarball = path.join(dir, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "pack-check", private: true }));
  // From the local npm cache where it can. Install scripts are skipped: the only one that does work here
  // builds sqlite3 from source (minutes); its binary is taken from this checkout's build instead (same
  // version). lmdb, msgpackr-extract and bufferutil load their prebuilt binaries without a script.
  await npm(["install", "--omit=dev", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", tarball], app);
  const sqlite = (root: string) => path.join(root, "node_modules", "sqlite3");
  const version = (root: string) => (JSON.parse(fs.readFileSync(path.join(sqlite(root), "package.json"), "utf8")) as { version: string }).version;
  expect(version(app)).toBe(version(ROOT));
  fs.cpSync(path.join(sqlite(ROOT), "build", "Release", "node_sqlite3.node"), path.join(sqlite(app), "build", "Release", "node_sqlite3.node"));
}, 600_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it("installs working edge-agent, agentctl and cloud-peer commands", async () => {
  const help = async (name: string) => (await run(process.execPath, [bin(name), "--help"], { cwd: dir })).stdout;
  expect(await help("agentctl")).toContain("Usage: agentctl");
  expect(await help("cloud-peer")).toContain("Usage: cloud-peer");
  expect(await help("edge-agent")).toContain("edge-agent");

  const socket = path.join(dir, "agent.sock");
  const agent = spawn(process.execPath, [bin("edge-agent"), "--socket", socket, "--data", path.join(dir, "agent-data"), "--log-level", "warn"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  try {
    const api = new ApiClient(socket);
    await expect.poll(async () => (await api.get("/version").catch(() => undefined))?.status, { timeout: 60_000, interval: 100 }).toBe(200);
    const v = await run(process.execPath, [bin("agentctl"), "--socket", socket, "version"], { cwd: dir });
    expect(v.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  } finally {
    await stopChild(agent);
  }
}, 120_000);

it("installs no TypeScript toolchain and no test-only dependency", async () => {
  const tree = (await npm(["ls", "--omit=dev", "--all"], app)).stdout;
  expect(tree).toContain("measure-edge-cloud@");
  for (const name of ["tsx", "typescript", "esbuild", "web3", "keccak", "secp256k1"]) expect(tree).not.toMatch(new RegExp(`[\\s─]${name}@`));
  // Nothing runs TypeScript: no loader is even installed.
  expect(fs.existsSync(path.join(app, "node_modules", "tsx"))).toBe(false);
}, 60_000);
