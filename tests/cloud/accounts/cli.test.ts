import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { startTestPeer } from "../harness.js";
import { caller } from "./helpers.js";

const run = promisify(execFile);
const BIN = path.resolve("bin/cloud-peer.mjs");

describe("cloud-peer token create", () => {
  it("prints a working API token for a user, beside a running peer", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-peer-"));
    const peer = await startTestPeer({ dataDir });
    try {
      const env = { ...process.env, CLOUD_LOG_LEVEL: "silent" };
      const { stdout } = await run(
        process.execPath,
        [BIN, "token", "create", "--user", "admin", "--name", "script", "--data", dataDir],
        { env, timeout: 30_000 },
      );
      const token = stdout.trim();
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const me = await caller(peer, token)("/auth/users/me");
      expect(me.status).toBe(200);
      expect(me.body.name).toBe("admin");
      const list = await caller(peer, token)("/auth/users/me/tokens");
      expect(list.body.items.map((t: any) => t.name)).toContain("script");
      // The failure cases and the help run side by side: each child needs a few seconds to start tsx.
      const wrongDir = path.join(dataDir, "not-a-peer");
      const [dup, none, help, wrong] = await Promise.all([
        run(process.execPath, [BIN, "token", "create", "--user", "admin", "--name", "script", "--data", dataDir], {
          env,
        }).catch((e) => e),
        run(process.execPath, [BIN, "token", "create", "--user", "ghost", "--name", "x", "--data", dataDir], {
          env,
        }).catch((e) => e),
        run(process.execPath, [BIN, "token", "create", "--help"], { env }),
        run(process.execPath, [BIN, "token", "create", "--user", "admin", "--name", "x", "--data", wrongDir], {
          env,
        }).catch((e) => e),
      ]);
      // A wrong --data creates no new database (and no new admin whose password would be printed).
      expect(wrong.code).toBe(1);
      expect(wrong.stdout).toBe("");
      expect(wrong.stderr).toContain("no cloud-peer database");
      expect(fs.existsSync(wrongDir)).toBe(false);
      expect(dup.code).toBe(1);
      expect(dup.stderr).toContain("already exist");
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('no user named "ghost"');
      expect(help.stdout).toContain("--user <name>");
    } finally {
      await peer.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("cloud-peer token list / revoke", () => {
  it("lists a user's tokens without their secrets and revokes one by id or name, beside a running peer", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-peer-"));
    const peer = await startTestPeer({ dataDir });
    try {
      const env = { ...process.env, CLOUD_LOG_LEVEL: "silent" };
      const cli = (...args: string[]) =>
        run(process.execPath, [BIN, ...args, "--data", dataDir], { env, timeout: 30_000 }).then(
          (r) => ({ code: 0, ...r }),
          (e: { code: number; stdout: string; stderr: string }) => e,
        );
      const [a, b] = await Promise.all([
        cli("token", "create", "--user", "admin", "--name", "first"),
        cli("token", "create", "--user", "admin", "--name", "second"),
      ]);
      const first = a.stdout.trim();
      const second = b.stdout.trim();
      expect(await caller(peer, first)("/auth/users/me")).toMatchObject({ status: 200 });

      const list = await cli("tokens", "list", "--user", "admin");
      expect(list.code).toBe(0);
      const lines = list.stdout.trim().split("\n");
      expect(lines[0]).toBe("id  name  created_at  expired_at  last_used_at");
      expect(
        lines
          .slice(1)
          .map((l) => l.split("  ")[1])
          .sort(),
      ).toEqual(["first", "second"]);
      expect(list.stdout).not.toContain(first);
      expect(list.stdout).not.toContain(second);
      const json = await cli("token", "list", "--user", "admin", "--json");
      const items = json.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(items.map((t) => t.name).sort()).toEqual(["first", "second"]);
      for (const t of items) expect(Object.keys(t)).not.toContain("token");
      const firstId = items.find((t) => t.name === "first").id;

      const byId = await cli("token", "revoke", "--user", "admin", "--id", String(firstId));
      expect(byId.stdout).toBe(`revoked API token ${firstId} ("first") of "admin"\n`);
      expect((await caller(peer, first)("/auth/users/me")).status).toBe(401);
      expect((await caller(peer, second)("/auth/users/me")).status).toBe(200);
      const [byName, gone, both] = await Promise.all([
        cli("tokens", "revoke", "--user", "admin", "--name", "second"),
        cli("token", "revoke", "--user", "admin", "--id", String(firstId)),
        cli("token", "revoke", "--user", "admin", "--id", "1", "--name", "x"),
      ]);
      expect(byName.code).toBe(0);
      expect((await caller(peer, second)("/auth/users/me")).status).toBe(401);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toBe(`cloud-peer token revoke: user "admin" has no API token with id ${firstId}\n`);
      expect(both.code).toBe(1);
      expect(both.stderr).toContain("give --id or --name (one of them)");
      expect((await cli("token", "list", "--user", "admin")).stdout.trim().split("\n")).toHaveLength(1);
    } finally {
      await peer.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
