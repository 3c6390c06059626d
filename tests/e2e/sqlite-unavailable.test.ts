// A device where sqlite3 (the cloud's optional native module) could be neither downloaded nor built: the
// processes here cannot resolve it. The edge agent does not need it and streams to a cloud peer elsewhere;
// a cloud peer started there stops at once with one clear line, never a stack trace.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, startConnectedStack, until, type Stack } from "./stack.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const HIDE_SQLITE3 = ["--import", path.join(ROOT, "tests/support/hide-sqlite3.mjs")];
const PLATFORM = `${process.platform}-${process.arch}`;
const MESSAGE = `storage: the sqlite3 module is not installed for ${PLATFORM}; reinstall the package with build tools present (python3, make, a C++ compiler) so npm can build it (docs/platforms.md)`;

let s: Stack;
beforeAll(async () => {
  s = await startConnectedStack({ agent: "child", agentNodeArgs: HIDE_SQLITE3 });
}, 120_000);
afterAll(async () => s?.close());

it("runs the agent without sqlite3: a connector's points reach the cloud", async () => {
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    await writeNumbered(fh, 0, 100, { size: 16 });
  } finally {
    await fh.close();
  }
  await until(async () => (await cloudIndices(s)).length === 100, 30_000, "100 points in the cloud");
  expect(await cloudIndices(s)).toEqual(range(0, 100));
}, 120_000);

const cloudPeer = (args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [...HIDE_SQLITE3, path.join(ROOT, "bin/cloud-peer.mjs"), ...args],
      { env: { ...process.env, CLOUD_ADMIN_PASSWORD: "No-sqlite3-here-1" }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );

it("stops a cloud peer without sqlite3 at start with one clear line", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sqlite-unavailable-"));
  try {
    const r = await cloudPeer(["--listen", "127.0.0.1:0", "--data", dir, "--log-level", "silent"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`cloud-peer: ${MESSAGE}\n`);
    // Nothing half-made: a later start with sqlite3 finds an empty data directory.
    expect(fs.readdirSync(dir)).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

it("answers a sub-command that needs the database with the same line", async () => {
  // A database made by a peer that had sqlite3 (this test process has it), then opened without.
  const peerDir = path.join(s.dir, "cloud");
  const r = await cloudPeer(["token", "create", "--user", "admin", "--name", "t", "--data", peerDir]);
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(`cloud-peer token create: ${MESSAGE}\n`);
}, 120_000);
