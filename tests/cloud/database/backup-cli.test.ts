// `cloud-peer backup` and `cloud-peer restore` as an operator runs them: what they refuse, and that a
// restored data directory serves the same accounts and keeps the QUIC certificate.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminToken, caller } from "../accounts/helpers.js";
import { startTestPeer, type TestPeer } from "../harness.js";

const exec = promisify(execFile);
const BIN = path.resolve("bin/cloud-peer.mjs");
const env = { ...process.env, CLOUD_LOG_LEVEL: "silent" };
const run = (args: string[]) =>
  exec(process.execPath, [BIN, ...args], { env, timeout: 60_000 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

describe("cloud-peer backup / restore", () => {
  let dir: string;
  let peer: TestPeer;
  let token: string;
  const backup = () => path.join(dir, "backup");

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "backup-cli-"));
    // With QUIC on, the peer makes its self-signed certificate under <data>/quic: part of what a backup keeps.
    peer = await startTestPeer({ dataDir: path.join(dir, "data"), config: { iscpQuicListen: "127.0.0.1:0" } });
    token = await adminToken(peer, "backup-test");
    const made = await run(["backup", "--data", peer.dataDir, "--to", backup()]);
    expect(made.code, made.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await peer?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a backup into a non-empty path, or from a directory without a peer", async () => {
    const [again, none] = await Promise.all([
      run(["backup", "--data", peer.dataDir, "--to", backup()]),
      run(["backup", "--data", path.join(dir, "nothing"), "--to", path.join(dir, "b2")]),
    ]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("exists and is not empty");
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("no cloud-peer database");
    expect(fs.existsSync(path.join(dir, "nothing"))).toBe(false);
    expect(fs.existsSync(path.join(dir, "b2"))).toBe(false);
  }, 120_000);

  it("restore refuses a non-empty data directory unless --force, and a directory that is no backup", async () => {
    const target = path.join(dir, "occupied");
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, "cloud.db"), "someone else's data");
    const [refused, notBackup] = await Promise.all([
      run(["restore", "--from", backup(), "--data", target]),
      run(["restore", "--from", peer.dataDir, "--data", path.join(dir, "fresh")]),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is not empty");
    expect(refused.stderr).toContain("--force");
    expect(fs.readFileSync(path.join(target, "cloud.db"), "utf8")).toBe("someone else's data");
    expect(notBackup.code).toBe(1);
    expect(notBackup.stderr).toContain("is not a cloud-peer backup");
    expect(fs.existsSync(path.join(dir, "fresh"))).toBe(false);

    // A stale WAL beside the old database must go too, or SQLite would replay it into the restored one.
    fs.writeFileSync(path.join(target, "cloud.db-wal"), "stale");
    const forced = await run(["restore", "--from", backup(), "--data", target, "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(fs.existsSync(path.join(target, "cloud.db-wal"))).toBe(false);
    expect(fs.statSync(path.join(target, "cloud.db")).mode & 0o777).toBe(0o600);
    for (const f of ["cert.pem", "key.pem"])
      expect(fs.readFileSync(path.join(target, "quic", f), "utf8")).toBe(
        fs.readFileSync(path.join(peer.dataDir, "quic", f), "utf8"),
      );

    const restored = await startTestPeer({ dataDir: target });
    try {
      const me = await caller(restored, token)("/auth/users/me");
      expect(me.status).toBe(200);
      expect(me.body.name).toBe("admin");
    } finally {
      await restored.close();
    }
  }, 120_000);
});
