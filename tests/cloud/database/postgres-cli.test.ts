// The maintenance commands on a peer whose store is PostgreSQL, as real child processes: the database named by
// --database, by CLOUD_DATABASE, or by the program's --database before the sub-command; no data directory of the
// peer needed. backup and restore refuse PostgreSQL and point to pg_dump; a database without a store is refused
// rather than given a new one. A first start's banner names the recovery command without repeating the URL.
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresInstalled, startPostgres, type PgServer } from "../../support/postgres.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { decodeJwt, passwordToken } from "../oauth/helpers.js";

const BIN = path.resolve(import.meta.dirname, "../../../bin/cloud-peer.mjs");

describe.runIf(postgresInstalled())("maintenance commands on PostgreSQL", () => {
  let pg: PgServer;
  let url: string;
  let peer: TestPeer;
  /** An empty working directory: the commands need no data directory of the peer. */
  let cwd: string;
  beforeAll(async () => {
    pg = await startPostgres();
    url = await pg.createDatabase();
    peer = await startTestPeer({ config: { database: url } });
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), "pg-cli-"));
  }, 120_000);
  afterAll(async () => {
    await peer?.stop();
    pg?.stop();
    if (cwd) fs.rmSync(cwd, { recursive: true, force: true });
  }, 120_000);

  const cli = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [BIN, ...args],
        { cwd, env: { ...process.env, CLOUD_LOG_LEVEL: "warn", CLOUD_DATABASE: "", ...env }, timeout: 60_000 },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );

  it("token create with --database gives a token the peer accepts", async () => {
    const r = await cli(["token", "create", "--user", "admin", "--name", "ops", "--database", url]);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    const me = await peer.api("/auth/users/me", { headers: { "X-Intdash-Token": r.stdout.trim() } });
    expect(me.status).toBe(200);
  }, 120_000);

  it("keys rotate with CLOUD_DATABASE, keys list with the program's --database: the peer signs with the new key", async () => {
    const rotated = await cli(["keys", "rotate"], { CLOUD_DATABASE: url });
    expect(rotated.code).toBe(0);
    const kid = /new signing key (\S+);/.exec(rotated.stdout)?.[1];
    expect(kid).toBeTruthy();
    const listed = await cli(["--database", url, "keys", "list"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split("\n").find((l) => l.startsWith(kid!))).toMatch(/current$/);
    await peer.svc.oauth.keys.reload(); // what the 30 s reload timer does
    expect(decodeJwt((await passwordToken(peer, "admin", "Admin-password-1")).access_token).header.kid).toBe(kid);
  }, 120_000);

  it("admin reset-password with --database sets a temporary password", async () => {
    const r = await cli(["admin", "reset-password", "--user", "admin", "--database", url]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/temporary password of "admin" set/);
    const password = r.stdout.trim();
    expect(password.length).toBeGreaterThan(8);
    // The old password no longer signs in.
    await expect(passwordToken(peer, "admin", "Admin-password-1")).rejects.toThrow();
  }, 120_000);

  it("backup and restore refuse PostgreSQL and name pg_dump / pg_restore", async () => {
    const to = path.join(cwd, "backup");
    const backup = await cli(["backup", "--to", to, "--database", url]);
    expect(backup.code).toBe(1);
    expect(backup.stderr).toMatch(/^cloud-peer backup: the store is PostgreSQL .*pg_dump/);
    expect(fs.existsSync(to)).toBe(false);
    const restore = await cli(["restore", "--from", to, "--data", path.join(cwd, "restored")], { CLOUD_DATABASE: url });
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(/^cloud-peer restore: the store is PostgreSQL .*pg_restore/);
  }, 120_000);

  it("refuses a database without a store and leaves it empty, never printing the URL", async () => {
    const empty = await pg.createDatabase();
    const r = await cli(["token", "create", "--user", "admin", "--name", "x", "--database", empty]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^cloud-peer token create: the database --database names holds no cloud-peer store/);
    expect(r.stderr).not.toContain(empty);
    const again = await cli(["keys", "list", "--database", empty]);
    expect(again.stderr).toMatch(/holds no cloud-peer store/);
  }, 120_000);

  it("a first start on PostgreSQL points to reset-password with the same --database, without the URL", async () => {
    const fresh = await pg.createDatabase();
    const { CLOUD_ADMIN_PASSWORD: _, ...env } = process.env;
    const child = spawn(
      process.execPath,
      [BIN, "--listen", "127.0.0.1:0", "--data", path.join(cwd, "first"), "--database", fresh],
      {
        env: { ...env, CLOUD_LOG_LEVEL: "warn" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (c) => {
          out += String(c);
          if (out.includes("reset-password")) resolve();
        });
        child.once("exit", (code) => reject(new Error(`cloud-peer exited (${code}): ${out}`)));
      });
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await gone;
      }
    }
    expect(out).toContain("cloud-peer admin reset-password --user admin with the same --database (or CLOUD_DATABASE)");
    expect(out).not.toContain(fresh);
  }, 120_000);
});
