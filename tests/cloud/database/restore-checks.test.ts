// `cloud-peer restore` checks the copy before it removes anything: a truncated, bit-flipped, empty or newer-schema
// backup is refused with the working data directory left as it was, and a running peer's directory is refused.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sqlite3 from "sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminToken, caller } from "../accounts/helpers.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { runCloudPeer as run } from "./cloud-peer-cli.js";

function sql(file: string, statement: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, (err) => {
      if (err) return reject(err);
      db.exec(statement, (e) => db.close(() => (e ? reject(e) : resolve())));
    });
  });
}

/** Every file under `dir` with its bytes, to see that nothing changed. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile())
      out[path.relative(dir, path.join(e.parentPath, e.name))] = fs
        .readFileSync(path.join(e.parentPath, e.name))
        .toString("base64");
  return out;
}

describe("cloud-peer restore checks the copy first", () => {
  let dir: string;
  let peer: TestPeer;
  let token: string;
  const backup = () => path.join(dir, "backup");
  /** A stopped peer's data directory that a forced restore would replace. */
  const working = () => path.join(dir, "working");

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "restore-checks-"));
    peer = await startTestPeer({ dataDir: path.join(dir, "data") });
    token = await adminToken(peer, "restore-test");
    const made = await run(["backup", "--data", peer.dataDir, "--to", backup()]);
    expect(made.code, made.stderr).toBe(0);
    const restored = await run(["restore", "--from", backup(), "--data", working()]);
    expect(restored.code, restored.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await peer?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A copy of the backup whose database `spoil` changes. */
  async function spoiled(name: string, spoil: (db: string) => Promise<void> | void): Promise<string> {
    const to = path.join(dir, name);
    fs.cpSync(backup(), to, { recursive: true });
    await spoil(path.join(to, "cloud.db"));
    return to;
  }

  const cases: Array<[string, (db: string) => Promise<void> | void, RegExp]> = [
    ["truncated", (db) => fs.truncateSync(db, Math.floor(fs.statSync(db).size / 2)), /damaged/],
    [
      "bit-flipped",
      (db) => {
        // The b-tree page headers of pages 2 to 4 (16 KiB pages): what a flipped disk block does to them.
        const fd = fs.openSync(db, "r+");
        for (const page of [1, 2, 3]) fs.writeSync(fd, Buffer.alloc(16, 0xa5), 0, 16, page * 16384);
        fs.closeSync(fd);
      },
      /damaged/,
    ],
    ["empty", (db) => fs.writeFileSync(db, ""), /holds no cloud-peer store/],
    [
      "newer",
      (db) =>
        sql(
          db,
          "INSERT INTO schema_migrations (version, name, applied_at) VALUES (99999, 'from the future', '2030-01-01T00:00:00Z')",
        ),
      /newer cloud-peer/,
    ],
  ];

  for (const [name, spoil, message] of cases) {
    it(`refuses a ${name} backup and leaves the data directory as it was`, async () => {
      const from = await spoiled(name, spoil);
      const before = snapshot(working());
      const r = await run(["restore", "--from", from, "--data", working(), "--force"]);
      expect(r.code, r.stdout).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(snapshot(working())).toEqual(before);
      // Into a new directory it leaves nothing behind either.
      const fresh = path.join(dir, `fresh-${name}`);
      expect((await run(["restore", "--from", from, "--data", fresh])).code).toBe(1);
      expect(fs.existsSync(fresh)).toBe(false);
    }, 120_000);
  }

  it("refuses the data directory of a running peer, which keeps serving", async () => {
    const before = snapshot(peer.dataDir);
    const r = await run(["restore", "--from", backup(), "--data", peer.dataDir, "--force"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/in use by process \d+/);
    expect(Object.keys(snapshot(peer.dataDir)).sort()).toEqual(Object.keys(before).sort());
    expect((await caller(peer, token)("/auth/users/me")).status).toBe(200);
  }, 120_000);

  it("replaces a stopped peer's data with a good backup, leaving nothing staged or aside", async () => {
    const r = await run(["restore", "--from", backup(), "--data", working(), "--force"]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readdirSync(working()).filter((n) => /restoring|replaced/.test(n))).toEqual([]);
    const restored = await startTestPeer({ dataDir: working() });
    try {
      expect((await caller(restored, token)("/auth/users/me")).status).toBe(200);
    } finally {
      await restored.close();
    }
  }, 120_000);
});
