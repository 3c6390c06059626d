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
