// Getting back into a peer: `cloud-peer admin reset-password` on a running peer's data directory, the
// first start's temporary admin password kept in a 0600 file until it is changed, and the hint a first
// start prints when it fails after creating the database.
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startTestPeer } from "../harness.js";

const BIN = path.resolve("bin/cloud-peer.mjs");
// The peer must generate the admin's password: no CLOUD_ADMIN_PASSWORD from the environment.
const { CLOUD_ADMIN_PASSWORD: _unused, ...baseEnv } = process.env;
const env = { ...baseEnv, CLOUD_LOG_LEVEL: "silent" };
const run = (args: string[]) =>
  promisify(execFile)(process.execPath, [BIN, ...args], { env, timeout: 60_000 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

const dirs: string[] = [];
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "admin-recovery-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function passwordGrant(url: string, username: string, password: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/api/auth/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "password", username, password }).toString(),
  });
  return { status: res.status, body: await res.json() };
}

async function me(url: string, accessToken: string): Promise<any> {
  const res = await fetch(`${url}/api/auth/users/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  expect(res.status).toBe(200);
  return res.json();
}

describe("cloud-peer admin reset-password", () => {
  it("sets a temporary password on a running peer's data; it signs in and must be changed", async () => {
    const dataDir = path.join(tempDir(), "data");
    const peer = await startTestPeer({ dataDir });
    try {
      const r = await run(["admin", "reset-password", "--user", "admin", "--data", dataDir]);
      expect(r.code, r.stderr).toBe(0);
      const password = r.stdout.trim();
      expect(r.stdout).toBe(`${password}\n`);
      expect(password.length).toBeGreaterThanOrEqual(12);
      expect(r.stderr).toContain("change it at the next sign-in");
      expect(r.stderr).not.toContain(password);

      const granted = await passwordGrant(peer.url, "admin", password);
      expect(granted.status, JSON.stringify(granted.body)).toBe(200);
      expect((await me(peer.url, granted.body.access_token)).password.is_temporary).toBe(true);
      expect((await passwordGrant(peer.url, "admin", "Admin-password-1")).status).not.toBe(200);

      const [ghost, wrongDir] = await Promise.all([
        run(["admin", "reset-password", "--user", "ghost", "--data", dataDir]),
        run(["admin", "reset-password", "--user", "admin", "--data", path.join(dataDir, "nope")]),
      ]);
      expect(ghost.code).toBe(1);
      expect(ghost.stderr).toContain('no user named "ghost"');
      expect(wrongDir.code).toBe(1);
      expect(wrongDir.stdout).toBe("");
      expect(wrongDir.stderr).toContain("no cloud-peer database");
      expect(fs.existsSync(path.join(dataDir, "nope"))).toBe(false);
    } finally {
      await peer.close();
    }
  }, 120_000);
});

/** Starts bin/cloud-peer.mjs; resolves with its output once it listens or exits. */
function startPeerProcess(dataDir: string, listen: string) {
  const child = spawn(process.execPath, [BIN, "--listen", listen, "--data", dataDir], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => (stdout += String(c)));
  child.stderr.on("data", (c) => (stderr += String(c)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const ready = new Promise<{ url?: string; code?: number | null }>((resolve) => {
    child.stdout.on("data", () => {
      const m = /listening on (http:\/\/\S+)/.exec(stdout);
      if (m && stdout.includes("\n", m.index + m[0].length)) resolve({ url: m[1] });
    });
    void exited.then((code) => resolve({ code }));
  });
  return {
    ready,
    output: () => ({ stdout, stderr }),
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

describe("the first start's admin password file", () => {
  it("is written 0600 at the first start, named by the banner, and removed when the admin changes the password", async () => {
    const dataDir = path.join(tempDir(), "data");
    const p = startPeerProcess(dataDir, "127.0.0.1:0");
    try {
      const { url } = await p.ready;
      expect(url, p.output().stderr).toBeDefined();
      const file = path.join(dataDir, "initial-admin-password");
      const { stdout } = p.output();
      const printed = /temporary password: (\S+)/.exec(stdout)![1]!;
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(file, "utf8")).toBe(`${printed}\n`);
      expect(stdout).toContain(`temporary password, kept in ${file} until it is changed`);

      const granted = await passwordGrant(url!, "admin", printed);
      expect(granted.status, JSON.stringify(granted.body)).toBe(200);
      const res = await fetch(`${url}/api/auth/users/me/password`, {
        method: "PUT",
        headers: { authorization: `Bearer ${granted.body.access_token}`, "content-type": "application/json" },
        body: JSON.stringify({ password: "Brand-new-pass-42", old_password: printed }),
      });
      expect(res.status, await res.text()).toBe(200);
      expect(fs.existsSync(file)).toBe(false);
    } finally {
      await p.stop();
    }
  }, 120_000);

  it("a first start that fails on a taken port says where the password is and how to reset it", async () => {
    const dataDir = path.join(tempDir(), "data");
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const p = startPeerProcess(dataDir, `127.0.0.1:${port}`);
      const { code } = await p.ready;
      expect(code).toBe(2);
      const file = path.join(dataDir, "initial-admin-password");
      const { stdout, stderr } = p.output();
      expect(stderr).toContain("EADDRINUSE");
      expect(stderr).toContain(`kept in ${file}`);
      expect(stderr).toContain(`cloud-peer admin reset-password --user admin --data ${dataDir}`);
      expect(fs.readFileSync(file, "utf8")).toBe(`${/temporary password: (\S+)/.exec(stdout)![1]}\n`);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  }, 120_000);
});
