// docs/guide/scale-out.md's walkthrough, followed on one machine. Its `sh test` blocks run here in order, in bash,
// as one shell session would (each block starts from the variables the earlier ones exported), with a real
// PostgreSQL 15 and nats-server that the test starts, and the example addresses of the guide replaced by theirs
// and by free ports (the table below; each entry must apply, so the guide and this test stay in step). The
// commands are the package's bins (package.json "bin") linked on PATH, and PostgreSQL's createuser and createdb,
// which the guide runs as the `postgres` user, connect as the test server's superuser. The SQLite peer the guide moves is made here first,
// with an edge the peers must then serve. The peers the blocks start in the background are stopped by the last
// block; whatever is still running at the end is killed by the PID the blocks wrote.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../e2e/stack.js";
import { blockRunner, guideBlocks } from "./guide-blocks.js";
import { ROOT } from "../deploy/unit-file.js";
import { startPostgres, type PgServer } from "../support/postgres.js";
import { freePort, startNats, type NatsServer } from "../support/nats.js";
import { startTestPeer } from "../cloud/harness.js";
import { adminToken, caller } from "../cloud/accounts/helpers.js";

const { guide, blocks, testBlocks } = guideBlocks("scale-out.md");

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "scale-out-guide-"));
const work = path.join(dir, "work");
const bin = path.join(dir, "bin");
const sqlitePeer = path.join(dir, "var", "lib", "cloud-peer");
const state = path.join(dir, "shell-state.sh");
/** Where Debian's postgresql-15 puts createuser and createdb (as tests/support/postgres.ts finds the server). */
const PG_BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";
/** The admin password startTestPeer gives the SQLite peer the guide moves. */
const ADMIN_PASSWORD = "Admin-password-1";
let pgServer: PgServer | undefined;
let nats: NatsServer | undefined;
const ports: number[] = [];

function substitutions(): Array<[string, string]> {
  return [
    // createuser and createdb of PostgreSQL's binaries, run as the server's superuser over TCP (it trusts local connections).
    ["sudo -u postgres ", `env PGHOST=127.0.0.1 PGPORT=${pgServer!.port} PGUSER=postgres `],
    ["postgres://cloud@127.0.0.1:5432/cloud", `postgres://cloud@127.0.0.1:${pgServer!.port}/cloud`],
    ["nats://127.0.0.1:4222", nats!.url],
    ["/var/lib/cloud-peer", sqlitePeer],
    ...ports.map((p, i): [string, string] => [`127.0.0.1:808${i + 1}`, `127.0.0.1:${p}`]),
    ["Correct-horse-battery-42", ADMIN_PASSWORD],
  ];
}
/** Runs the guide's next `sh test` block (`set -euo pipefail`, the variables the earlier blocks exported). */
const { nextBlock, unused } = blockRunner({
  testBlocks,
  substitutions,
  state,
  cwd: work,
  env: () => ({ ...process.env, PATH: `${bin}:${PG_BIN}:${process.env.PATH}`, CLOUD_LOG_LEVEL: "warn" }),
  // A bound on the blocks' `until` loops: a peer that never gets ready fails the test instead of hanging it.
  timeoutMs: 120_000,
  onFailure: () => `peer logs:\n${peerLogs()}`,
});

const peerLogs = () =>
  [1, 2, 3]
    .map((i) => path.join(work, `peer-${i}.log`))
    .filter((f) => fs.existsSync(f))
    .map((f) => `${path.basename(f)}: ${fs.readFileSync(f, "utf8")}`)
    .join("\n");

/** The PIDs the blocks wrote for the peers they started in the background. */
const peerPids = () =>
  [1, 2, 3]
    .map((i) => path.join(work, `peer-${i}.pid`))
    .filter((f) => fs.existsSync(f))
    .map((f) => Number(fs.readFileSync(f, "utf8").trim()));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The SQLite peer the guide moves: made by a peer on its own data directory, with one edge, then stopped. */
async function makeSqlitePeer(): Promise<void> {
  fs.mkdirSync(sqlitePeer, { recursive: true });
  const peer = await startTestPeer({ dataDir: sqlitePeer });
  try {
    const r = await caller(peer, await adminToken(peer))("/auth/edges", {
      method: "POST",
      json: { name: "vehicle-1" },
    });
    expect(r.status).toBe(201);
  } finally {
    await peer.stop();
  }
}

beforeAll(async () => {
  fs.mkdirSync(work);
  fs.mkdirSync(bin);
  // What `npm install -g` puts on PATH: a link per package.json "bin" entry to the bin file.
  const { bin: bins } = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
    bin: Record<string, string>;
  };
  for (const [name, file] of Object.entries(bins)) fs.symlinkSync(path.join(ROOT, file), path.join(bin, name));
  pgServer = await startPostgres();
  nats = await startNats();
  for (let i = 0; i < 3; i++) ports.push(await freePort());
  await makeSqlitePeer();
}, 120_000);

afterAll(async () => {
  for (const pid of peerPids()) if (alive(pid)) process.kill(pid, "SIGKILL");
  await until(() => peerPids().every((pid) => !alive(pid)), 10_000, "the peers' exit").catch(() => undefined);
  await nats?.stop();
  pgServer?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe.sequential("docs/guide/scale-out.md", () => {
  it("marks every sh block: test (run here), hosts (several machines), bench (the benchmark)", () => {
    expect(blocks.length).toBe(guide.match(/^```sh/gm)!.length);
    expect(
      blocks.every((b) => ["test", "hosts", "bench"].includes(b.kind)),
      JSON.stringify(blocks.map((b) => b.kind)),
    ).toBe(true);
    expect(testBlocks.length).toBe(9);
  });

  it("makes the peers' role and its database, sets the database and NATS, and moves an SQLite peer's data there", async () => {
    await nextBlock();
    expect(await nextBlock()).toBe("");
    const rows = Number((await nextBlock()).trim());
    expect(rows).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(work, "migrate.log"), "utf8")).toMatch(/edges/);
  }, 120_000);

  it("starts three peers on the database and NATS; each answers ready", async () => {
    expect(await nextBlock()).toBe("");
    expect(peerPids()).toHaveLength(3);
    const out = await nextBlock();
    expect(out.match(/"status":"ready"/g), out).toHaveLength(3);
  }, 180_000);

  it("a token from one peer is accepted by another, an API token made on the command line by a third", async () => {
    expect(await nextBlock()).toBe("admin\n");
    expect(await nextBlock()).toBe("vehicle-1\n"); // the edge moved from the SQLite peer
  }, 120_000);

  it("a key rotated by the command is published by every peer", async () => {
    // The block waits until each peer publishes it. That the NATS notice, not the 30 s reload, does it is
    // tests/cloud/cluster/shared-state.test.ts's to show: a time bound here failed on a busy machine.
    const out = await nextBlock();
    expect(out.trim().split("\n")).toEqual(ports.map((p) => `http://127.0.0.1:${p} publishes the new key`));
  }, 180_000);

  it("stops the peers: each exits on SIGTERM", async () => {
    const pids = peerPids();
    await nextBlock();
    await until(() => pids.every((pid) => !alive(pid)), 30_000, "the peers' exit");
  }, 120_000);

  it("ran every test block, with every substitution", () => {
    expect(testBlocks).toEqual([]);
    expect(unused()).toEqual([]);
  });
});
