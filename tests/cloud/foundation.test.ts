import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokenCommand } from "../../cloud/cli/token.js";
import { loadConfig } from "../../cloud/config.js";
import { modules } from "../../cloud/modules.js";
import { migrate } from "../../cloud/database/migrate.js";
import { adminToken } from "./accounts/helpers.js";
import { startTestPeer, type TestPeer } from "./harness.js";
import { spawnPeerAt } from "./iscp/peer-process.js";
import { withPeerDatabaseEnv } from "../support/test-database.js";

const run = promisify(execFile);
const BIN = path.resolve("bin/cloud-peer.mjs");

describe("cloud peer foundation", () => {
  let peer: TestPeer;
  beforeAll(async () => {
    peer = await startTestPeer();
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("serves an OpenAPI 3.1 document", async () => {
    const res = await peer.api("/openapi.json");
    expect(res.status).toBe(200);
    const doc: any = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.IntdashToken).toEqual({
      type: "apiKey",
      in: "header",
      name: "X-Intdash-Token",
    });
  });

  it("answers unknown paths with a 404 in the error shape", async () => {
    const res = await peer.api("/no/such/thing");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const body: any = await res.json();
    expect(body.type).toBe("not_found");
    expect(typeof body.title).toBe("string");
  });

  it("keeps SQLite in WAL mode and records each applied migration once", async () => {
    if (peer.svc.db.dialect === "sqlite") {
      expect(await peer.svc.db.get("PRAGMA journal_mode")).toEqual({ journal_mode: "wal" });
      expect(await peer.svc.db.get("PRAGMA page_size")).toEqual({ page_size: 16384 });
    }
    const rows = await peer.svc.db.all<{ version: number; name: string }>(
      "SELECT version, name FROM schema_migrations ORDER BY version",
    );
    const all = modules.flatMap((m) => m.migrations ?? []);
    expect(rows.map((r) => r.version)).toEqual(all.map((m) => m.version).sort((a, b) => a - b));
    expect(rows.map((r) => r.version)).toContain(100);
    // A second run (the next start) applies nothing.
    expect(await migrate(peer.svc.db, all)).toEqual([]);
  });

  it("answers a known path with the wrong method with 405 and Allow", async () => {
    const res = await peer.api("/openapi.json", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("GET");
    expect(((await res.json()) as any).type).toBe("method_not_allowed");
  });
});

describe("settings", () => {
  it("reads flags before environment before defaults", () => {
    const c = loadConfig(
      { listen: "0.0.0.0:9000" },
      {
        CLOUD_LISTEN: "127.0.0.1:1",
        CLOUD_DATA: "/tmp/x",
        CLOUD_LOCKOUT_THRESHOLD: "7",
        CLOUD_PASSWORD_LIFETIME_DAYS: "0",
      },
    );
    expect(c).toMatchObject({
      listenHost: "0.0.0.0",
      listenPort: 9000,
      dataDir: "/tmp/x",
      publicUrl: "http://0.0.0.0:9000",
      lockoutThreshold: 7,
      passwordLifetimeDays: 0,
    });
    expect(loadConfig({}, {})).toMatchObject({
      listenPort: 8080,
      lockoutThreshold: 5,
      passwordLifetimeDays: 365,
      bodyLimit: 1024 * 1024,
      accessTokenTtl: 3600,
    });
  });

  it("refuses settings that are not integers instead of running with NaN", () => {
    for (const [name, value] of [
      ["CLOUD_LOCKOUT_THRESHOLD", "abc"],
      ["CLOUD_LOCKOUT_THRESHOLD", "0"],
      ["CLOUD_PASSWORD_LIFETIME_DAYS", "-1"],
      ["CLOUD_BODY_LIMIT", "1.5"],
      ["CLOUD_ACCESS_TOKEN_TTL", "1h"],
      ["CLOUD_LISTEN", "127.0.0.1:http"],
      ["CLOUD_LISTEN", "127.0.0.1:70000"],
    ])
      expect(() => loadConfig({}, { [name]: value }), `${name}=${value}`).toThrow(
        name === "CLOUD_LISTEN" ? /CLOUD_LISTEN/ : new RegExp(name),
      );
  });

  it("reads trusted proxies as addresses and CIDR ranges, and refuses anything else", () => {
    expect(loadConfig({}, {}).trustedProxies).toEqual([]);
    expect(loadConfig({}, { CLOUD_TRUSTED_PROXIES: " 10.0.0.0/8, 192.168.1.5 ,fd00::/8,::1" }).trustedProxies).toEqual([
      "10.0.0.0/8",
      "192.168.1.5",
      "fd00::/8",
      "::1",
    ]);
    for (const bad of ["proxy.local", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/8/1", "::1/129", "10.0.0.1/x", "1.2.3"])
      expect(() => loadConfig({}, { CLOUD_TRUSTED_PROXIES: `127.0.0.1,${bad}` }), bad).toThrow(
        `invalid CLOUD_TRUSTED_PROXIES entry "${bad}"`,
      );
  });
});

describe("the cloud-peer command", () => {
  it("--help lists every command, option and environment variable; a bad setting is one line and exit 2", async () => {
    const env = { ...process.env, CLOUD_LOG_LEVEL: "silent" };
    const [help, bad] = await Promise.all([
      run(process.execPath, [BIN, "--help"], { env, timeout: 60_000 }),
      run(process.execPath, [BIN, "--data", "/nonexistent/never-created"], {
        env: { ...env, CLOUD_LOCKOUT_THRESHOLD: "five" },
        timeout: 60_000,
      }).catch((e) => e),
    ]);
    for (const opt of ["--listen <host:port>", "--data <dir>", "--public-url <url>"])
      expect(help.stdout).toContain(opt);
    expect(help.stdout).toContain(
      "cloud-peer token create --user <name> --name <label> [--expires-at <date-time>] [--data <dir>] [--database <url>]",
    );
    expect(help.stdout).toContain("cloud-peer keys rotate");
    // Every CLOUD_* variable the code reads is listed.
    const files = fs.readdirSync("cloud", { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const vars = new Set(
      files.flatMap((f) => fs.readFileSync(path.join("cloud", f), "utf8").match(/CLOUD_[A-Z_]+[A-Z]/g) ?? []),
    );
    expect(vars.size).toBeGreaterThan(10);
    for (const v of vars) expect(help.stdout, v).toContain(v);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('cloud-peer: invalid CLOUD_LOCKOUT_THRESHOLD "five": expected an integer >= 1');
  }, 120_000);
});

describe("shutdown with a stuck client", () => {
  it("cuts a request that is still unfinished after the grace period and closes", async () => {
    const peer = await startTestPeer({ config: { shutdownGraceMs: 500 } });
    const token = await adminToken(peer);
    const { hostname, port } = new URL(peer.url);
    let inFlight!: () => void;
    const started = new Promise<void>((r) => (inFlight = r));
    const outcome = new Promise<string>((resolve) => {
      const headers = {
        "x-intdash-token": token,
        "content-type": "application/json",
        "content-length": 1000,
        expect: "100-continue",
      };
      const req = http.request({ host: hostname, port, method: "POST", path: "/api/auth/users", headers }, (res) =>
        resolve(`status ${res.statusCode}`),
      );
      req.on("error", (err) => resolve(`error ${(err as NodeJS.ErrnoException).code ?? err.message}`));
      req.flushHeaders();
      req.once("continue", () => {
        req.write('{"name":"never-finished"');
        setTimeout(inFlight, 100);
      });
    });
    await started;
    // A request left in flight would hold the stop for Node's requestTimeout (300 s), beyond the test's timeout.
    await peer.stop();
    expect(await outcome).toMatch(/^error /);
  }, 30_000);
});

const spawnPeer = (dataDir: string) => spawnPeerAt(dataDir);

describe("the cloud-peer process", () => {
  it("on SIGTERM stops accepting, finishes the in-flight request, closes the database; a restart keeps the data", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-peer-"));
    try {
      const first = await spawnPeer(dataDir);
      const token = await withPeerDatabaseEnv(dataDir, () =>
        createTokenCommand({ user: "admin", name: "signals", data: dataDir, logLevel: "silent" }),
      );
      const body = JSON.stringify({ name: "inflight", role_uuids: [] });
      const { hostname: host, port } = new URL(first.url);
      // A request whose body is still arriving when the signal comes. `Expect: 100-continue` tells
      // when the server has parsed its headers (before that it is an idle connection, not in flight).
      const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const headers = {
          "x-intdash-token": token,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          expect: "100-continue",
        };
        const req = http.request({ host, port, method: "POST", path: "/api/auth/users", headers }, (res) => {
          let text = "";
          res.on("data", (c) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode!, text }));
        });
        req.on("error", reject);
        req.flushHeaders();
        req.once("continue", () => {
          req.write(body.slice(0, 10));
          first.child.kill("SIGTERM");
          // Once new connections are refused, the rest of the body follows.
          const probe = () =>
            fetch(`${first.url}/api/openapi.json`).then(
              () => setTimeout(probe, 50),
              () => req.end(body.slice(10)),
            );
          probe();
        });
      });
      const r = await response;
      expect(r.status, r.text).toBe(201);
      expect(await first.exit).toBe(0);
      // A cleanly closed SQLite database has checkpointed and removed its WAL file.
      expect(fs.existsSync(path.join(dataDir, "cloud.db-wal"))).toBe(false);

      const second = await spawnPeer(dataDir);
      const found = await fetch(`${second.url}/api/auth/users?name[]=${encodeURIComponent('"inflight"')}`, {
        headers: { "X-Intdash-Token": token },
      });
      expect(found.status).toBe(200);
      expect(((await found.json()) as any).page.total_count).toBe(1);
      second.child.kill("SIGINT");
      expect(await second.exit).toBe(0);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
