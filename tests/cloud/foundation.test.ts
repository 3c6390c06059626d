import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../cloud/config.js";
import { startTestPeer, type TestPeer } from "./harness.js";

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
    expect(doc.components.securitySchemes.IntdashToken).toEqual({ type: "apiKey", in: "header", name: "X-Intdash-Token" });
  });

  it("answers unknown paths with a 404 in the error shape", async () => {
    const res = await peer.api("/no/such/thing");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const body: any = await res.json();
    expect(body.type).toBe("not_found");
    expect(typeof body.title).toBe("string");
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
    const c = loadConfig({ listen: "0.0.0.0:9000" }, { CLOUD_LISTEN: "127.0.0.1:1", CLOUD_DATA: "/tmp/x", CLOUD_LOCKOUT_THRESHOLD: "7", CLOUD_PASSWORD_LIFETIME_DAYS: "0" });
    expect(c).toMatchObject({ listenHost: "0.0.0.0", listenPort: 9000, dataDir: "/tmp/x", publicUrl: "http://0.0.0.0:9000", lockoutThreshold: 7, passwordLifetimeDays: 0 });
    expect(loadConfig({}, {})).toMatchObject({ listenPort: 8080, lockoutThreshold: 5, passwordLifetimeDays: 365, bodyLimit: 1024 * 1024, accessTokenTtl: 3600 });
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
      expect(() => loadConfig({}, { [name]: value }), `${name}=${value}`).toThrow(name === "CLOUD_LISTEN" ? /CLOUD_LISTEN/ : new RegExp(name));
  });
});

describe("the cloud-peer command", () => {
  it("--help lists every command, option and environment variable; a bad setting is one line and exit 2", async () => {
    const env = { ...process.env, CLOUD_LOG_LEVEL: "silent" };
    const [help, bad] = await Promise.all([
      run(process.execPath, [BIN, "--help"], { env, timeout: 60_000 }),
      run(process.execPath, [BIN, "--data", "/nonexistent/never-created"], { env: { ...env, CLOUD_LOCKOUT_THRESHOLD: "five" }, timeout: 60_000 }).catch((e) => e),
    ]);
    for (const opt of ["--listen <host:port>", "--data <dir>", "--public-url <url>"]) expect(help.stdout).toContain(opt);
    expect(help.stdout).toContain("cloud-peer token create --user <name> --name <label> [--data <dir>]");
    expect(help.stdout).toContain("cloud-peer keys rotate");
    // Every CLOUD_* variable the code reads is listed.
    const files = fs.readdirSync("cloud", { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const vars = new Set(files.flatMap((f) => fs.readFileSync(path.join("cloud", f), "utf8").match(/CLOUD_[A-Z_]+[A-Z]/g) ?? []));
    expect(vars.size).toBeGreaterThan(10);
    for (const v of vars) expect(help.stdout, v).toContain(v);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('cloud-peer: invalid CLOUD_LOCKOUT_THRESHOLD "five": expected an integer >= 1');
  }, 90_000);
});
