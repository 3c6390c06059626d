// `cloud-peer migrate status` as an upgrade script runs it, a real process on a real store (SQLite, or the
// PostgreSQL project's database): the migrations applied and pending, and an exit code saying whether the
// store is current. Also what a maintenance command says when SQLite cannot open the store (SQLITE_CANTOPEN).
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase } from "../../../cloud/database/open.js";
import { dropTestDatabase, onPostgres, testDatabaseFor } from "../../support/test-database.js";
import { startTestPeer } from "../harness.js";

const run = promisify(execFile);
const BIN = path.resolve("bin/cloud-peer.mjs");
let dataDir: string;
let database: string | undefined;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-migrate-status-"));
  database = await testDatabaseFor(dataDir);
  await (await startTestPeer({ dataDir })).stop();
}, 120_000);

afterAll(async () => {
  fs.rmSync(dataDir, { recursive: true, force: true });
  await dropTestDatabase(dataDir);
});

const status = () =>
  run(process.execPath, [BIN, "migrate", "status", "--data", dataDir, ...(database ? ["--database", database] : [])], {
    env: { ...process.env, CLOUD_LOG_LEVEL: "silent" },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

async function onStore(fn: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<unknown>) {
  const db = await openDatabase({ database: database ?? "sqlite:", dataDir, durability: "power-loss" });
  try {
    await fn(db);
  } finally {
    await db.close();
  }
}

it("lists the applied migrations and exits 0 on a current store; 3 with one pending; 4 after a newer version", async () => {
  const current = await status();
  expect(current.code).toBe(0);
  const lines = current.stdout.trim().split("\n");
  expect(lines[0]).toMatch(/^version\s+state\s+applied_at\s+name$/);
  expect(lines.at(-1)).toMatch(/^the store is current \(\d+ migrations applied\)$/);
  for (const line of lines.slice(1, -1)) expect(line).toMatch(/^\d+\s+applied\s+\d{4}-\d\d-\d\dT\S+\s+\S/);

  // The newest migration not yet applied, as after installing a newer cloud-peer.
  const newest = /^(\d+)\s+applied\s+\S+\s+(.+)$/.exec(lines.at(-2)!)!.slice(1);
  await onStore((db) => db.run("DELETE FROM schema_migrations WHERE version = ?", [Number(newest[0])]));
  const pending = await status();
  expect(pending.code).toBe(3);
  expect(pending.stdout).toContain(`\n${newest[0]!.padEnd(7)}  pending  -`);
  expect(pending.stdout).toContain(`  ${newest[1]}\n`);
  expect(pending.stdout.trim().split("\n").at(-1)).toBe(
    "1 migration(s) pending: cloud-peer applies them at its next start",
  );

  // Applied by a newer cloud-peer: this one would refuse to start.
  await onStore((db) =>
    db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
      99_999,
      "from the future",
      new Date().toISOString(),
    ]),
  );
  const newer = await status();
  expect(newer.code).toBe(4);
  expect(newer.stdout).toMatch(/\n99999\s+unknown\s+\S+ \(by a newer version\)\s+from the future\n/);
  expect(newer.stdout).toContain("the store was migrated by a newer cloud-peer");
}, 120_000);

// Needs root (as CI runs), to run the commands as another user. SQLite's error only: the PostgreSQL project
// has no such file, so the test is not defined there.
if (!onPostgres())
  it("says which file SQLite cannot open and that permissions are the likely cause, when the user may not enter the data directory", async () => {
    // The data directory is root's (0700); the commands run as nobody, as when run without sudo -u.
    fs.chmodSync(dataDir, 0o700);
    const asNobody = (args: string[]) =>
      run("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, BIN, ...args], {
        env: { ...process.env, CLOUD_LOG_LEVEL: "silent", CLOUD_ADMIN_PASSWORD: "Admin-password-1" },
        timeout: 30_000,
      }).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stderr: string }) => e,
      );
    const file = path.join(dataDir, "cloud.db");
    const [serve, list] = await Promise.all([
      asNobody(["--listen", "127.0.0.1:0", "--data", dataDir]),
      asNobody(["token", "list", "--user", "admin", "--data", dataDir]),
    ]);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain(
      `cannot open the database ${file} (SQLITE_CANTOPEN): check that its directory exists and that the user running this command (uid 65534) may read and write the directory and the file`,
    );
    expect(list.code).toBe(1);
    expect(list.stderr).toContain(`cannot read ${file}: permission denied to this user (uid 65534)`);
  }, 120_000);
