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
      const { stdout } = await run(process.execPath, [BIN, "token", "create", "--user", "admin", "--name", "script", "--data", dataDir], { env, timeout: 30_000 });
      const token = stdout.trim();
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const me = await caller(peer, token)("/auth/users/me");
      expect(me.status).toBe(200);
      expect(me.body.name).toBe("admin");
      const list = await caller(peer, token)("/auth/users/me/tokens");
      expect(list.body.items.map((t: any) => t.name)).toContain("script");
      // The failure cases and the help run side by side: each child needs a few seconds to start tsx.
      const [dup, none, help] = await Promise.all([
        run(process.execPath, [BIN, "token", "create", "--user", "admin", "--name", "script", "--data", dataDir], { env }).catch((e) => e),
        run(process.execPath, [BIN, "token", "create", "--user", "ghost", "--name", "x", "--data", dataDir], { env }).catch((e) => e),
        run(process.execPath, [BIN, "token", "create", "--help"], { env }),
      ]);
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
