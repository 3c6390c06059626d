// The package as a user installs it: `npm pack`, then `npm install --omit=dev <tarball>` in a fresh
// directory, on a platform without QUIC (the native binding of @matrixai/quic is removed, as on linux-arm64
// where none is published). The installed bins run the compiled code (the edge agent starts and answers
// agentctl), nothing of the development toolchain or the test-only blockchain libraries is installed, and
// the installed agent streams a connector's points over WebSocket to the installed cloud peer.
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ApiClient } from "../../../runtime/cli/client.js";
import { stopChild } from "../../../runtime/device-bench/children.js";
import { apiClient, ensureDemoCloud } from "../../../bin/demo-setup.js";
import { spawnPeerAt } from "../../cloud/iscp/peer-process.js";
import { cloudIndices, range, writeNumbered } from "../../e2e/points.js";
import { cloudData, openFifoWriter, until } from "../../e2e/stack.js";
import { packedTarball } from "../../support/run-artefacts.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const run = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pack-"));
const app = path.join(dir, "app");
const bin = (name: string) => path.join(app, "node_modules", ".bin", name);
const npm = (args: string[], cwd: string) =>
  run("npm", args, { cwd, maxBuffer: 64 << 20, env: { ...process.env, npm_config_update_notifier: "false" } });

beforeAll(async () => {
  // `npm pack` of this checkout, made once for the run (tests/support/run-artefacts.ts).
  const tarball = (await packedTarball()).file;
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "pack-check", private: true }));
  // From the local npm cache where it can. Install scripts are skipped: the only one that does work here
  // builds sqlite3 from source (minutes); its binary is taken from this checkout's build instead (same
  // version). lmdb, msgpackr-extract and bufferutil load their prebuilt binaries without a script.
  await npm(["install", "--omit=dev", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", tarball], app);
  const sqlite = (root: string) => path.join(root, "node_modules", "sqlite3");
  const version = (root: string) =>
    (JSON.parse(fs.readFileSync(path.join(sqlite(root), "package.json"), "utf8")) as { version: string }).version;
  expect(version(app)).toBe(version(ROOT));
  fs.cpSync(
    path.join(sqlite(ROOT), "build", "Release", "node_sqlite3.node"),
    path.join(sqlite(app), "build", "Release", "node_sqlite3.node"),
  );
  // No QUIC on this "device": its native binding package is gone, so importing @matrixai/quic fails.
  fs.rmSync(path.join(app, "node_modules", "@matrixai", `quic-${process.platform}-${process.arch}`), {
    recursive: true,
    force: true,
  });
  const quic = await run(process.execPath, ["--input-type=module", "-e", "await import('@matrixai/quic')"], {
    cwd: app,
  }).catch((e: { stderr: string }) => e);
  expect((quic as { stderr?: string }).stderr).toMatch(/native bindings|Cannot find/);
}, 600_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it("installs working edge-agent, agentctl and cloud-peer commands", async () => {
  const help = async (name: string) => (await run(process.execPath, [bin(name), "--help"], { cwd: dir })).stdout;
  expect(await help("agentctl")).toContain("Usage: agentctl");
  expect(await help("cloud-peer")).toContain("Usage: cloud-peer");
  expect(await help("edge-agent")).toContain("edge-agent");

  const socket = path.join(dir, "agent.sock");
  const agent = spawn(
    process.execPath,
    [bin("edge-agent"), "--socket", socket, "--data", path.join(dir, "agent-data"), "--log-level", "warn"],
    { cwd: dir, stdio: ["ignore", "ignore", "inherit"] },
  );
  try {
    const api = new ApiClient(socket);
    await expect
      .poll(async () => (await api.get("/version").catch(() => undefined))?.status, { timeout: 60_000, interval: 100 })
      .toBe(200);
    const v = await run(process.execPath, [bin("agentctl"), "--socket", socket, "version"], { cwd: dir });
    expect(v.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  } finally {
    await stopChild(agent);
  }
}, 120_000);

it("installs no TypeScript toolchain and no test-only dependency", async () => {
  const tree = (await npm(["ls", "--omit=dev", "--all"], app)).stdout;
  expect(tree).toContain("measure-edge-cloud@");
  for (const name of ["tsx", "typescript", "esbuild", "web3", "keccak", "secp256k1"])
    expect(tree).not.toMatch(new RegExp(`[\\s─]${name}@`));
  // Nothing runs TypeScript: no loader is even installed.
  expect(fs.existsSync(path.join(app, "node_modules", "tsx"))).toBe(false);
}, 120_000);

it("streams a connector's points over WebSocket from the installed agent to the installed cloud peer", async () => {
  const cloudDir = path.join(dir, "cloud-data");
  const cloud = await spawnPeerAt(cloudDir, {}, bin("cloud-peer"));
  const socket = path.join(dir, "stream", "agent.sock");
  let agent: ReturnType<typeof spawn> | undefined;
  try {
    const token = (
      await run(
        process.execPath,
        [bin("cloud-peer"), "token", "create", "--user", "admin", "--name", "pack-test", "--data", cloudDir],
        { cwd: dir },
      )
    ).stdout.trim();
    const edge = await ensureDemoCloud(dir, apiClient(cloud.url, token));
    agent = spawn(
      process.execPath,
      [bin("edge-agent"), "--socket", socket, "--data", path.join(dir, "stream-data"), "--log-level", "warn"],
      { cwd: dir, stdio: ["ignore", "ignore", "inherit"] },
    );
    const api = new ApiClient(socket);
    const call = async (method: string, p: string, body: unknown) =>
      expect(
        (await until(() => api.request(method, p, body).catch(() => undefined), 60_000, `${method} ${p}`)).status,
      ).toBeLessThan(300);
    await call("PATCH", "/connection", {
      server_url: cloud.url,
      project_uuid: edge.projectUuid,
      edge_uuid: edge.edgeUuid,
      client_secret: edge.edgeSecret,
    });
    await call("PATCH", "/transport", { protocol: "websocket" });
    await call("POST", "/upstreams", {
      id: "rt",
      persist: true,
      qos: "partial",
      flush_policy: "interval",
      flush_interval: 5,
    });
    // A FIFO in the agent's own IPC directory (next to its socket): allowed without --allow-dir.
    const fifo = path.join(dir, "stream", "ipc", "dc.fifo");
    await call("POST", "/device-connectors/upstream", {
      id: "dc",
      format: "iscp-v2-compat",
      dest_ids: ["rt"],
      ipc: { type: "fifo", path: fifo },
    });
    const fh = await openFifoWriter(fifo, 30_000);
    try {
      await writeNumbered(fh, 0, 200, { size: 16 });
    } finally {
      await fh.close();
    }
    const readBack = cloudData(() => cloud.url, token, edge.projectUuid);
    await until(async () => (await cloudIndices(readBack)).length >= 200, 60_000, "200 points in the cloud");
    expect(await cloudIndices(readBack)).toEqual(range(0, 200));
  } finally {
    await stopChild(agent);
    await stopChild(cloud.child);
  }
}, 180_000);
