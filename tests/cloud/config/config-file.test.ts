import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { loadConfig } from "../../../cloud/config.js";

const BIN = path.resolve("bin/cloud-peer.mjs");
let dir: string;
const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};
const errorOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  return "";
};

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-config-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("settings precedence: flags > environment > --config file > defaults", () => {
  it("takes each setting from the highest source that gives it", () => {
    const config = write(
      "all.yaml",
      "listen: 0.0.0.0:7001\nlockout-threshold: 9\nbody-limit: 2048\nlog-level: debug\ndurability: process-crash\n",
    );
    const c = loadConfig(
      { config, listen: "127.0.0.1:7003" },
      { CLOUD_LISTEN: "127.0.0.1:7002", CLOUD_LOCKOUT_THRESHOLD: "8" },
    );
    expect(c.listenPort).toBe(7003); // flag over environment and file
    expect(c.lockoutThreshold).toBe(8); // environment over file
    expect(c.bodyLimit).toBe(2048); // file over default
    expect(c.logLevel).toBe("debug");
    expect(c.durability).toBe("process-crash");
    expect(c.accessTokenTtl).toBe(3600); // default
  });

  it("reads mappings and lists in the file for broker limits and trusted proxies", () => {
    const config = write(
      "nested.yaml",
      "iscp-limits:\n  maxUpstreamsPerConn: 4\ntrusted-proxies:\n  - 10.0.0.0/8\n  - 192.168.1.1\n",
    );
    expect(loadConfig({ config }, {})).toMatchObject({
      iscpLimits: { maxUpstreamsPerConn: 4 },
      trustedProxies: ["10.0.0.0/8", "192.168.1.1"],
    });
  });
});

describe("bad settings", () => {
  it("refuses unknown keys in the file, naming each of them", () => {
    const config = write("unknown.yaml", "listen: 127.0.0.1:0\nlisten-port: 80\nCLOUD_DATA: /x\n");
    expect(errorOf(() => loadConfig({ config }, {}))).toMatch(
      /unknown keys listen-port, CLOUD_DATA \(known: listen, data,/,
    );
  });

  it("names the source of a bad value: flag, variable or file key", () => {
    const config = write("bad.yaml", "lockout-threshold: zero\n");
    expect(errorOf(() => loadConfig({ lockoutThreshold: "0" }, {}))).toBe(
      'invalid --lockout-threshold "0": expected an integer >= 1',
    );
    expect(errorOf(() => loadConfig({}, { CLOUD_LOCKOUT_THRESHOLD: "0" }))).toBe(
      'invalid CLOUD_LOCKOUT_THRESHOLD "0": expected an integer >= 1',
    );
    expect(errorOf(() => loadConfig({ config }, {}))).toBe(
      `invalid lockout-threshold "zero" in ${config}: expected an integer >= 1`,
    );
    expect(errorOf(() => loadConfig({ config: path.join(dir, "missing.yaml") }, {}))).toMatch(
      /invalid --config ".*missing\.yaml": cannot read the file \(ENOENT\)/,
    );
    expect(errorOf(() => loadConfig({ config: write("list.yaml", "- listen\n") }, {}))).toMatch(
      /expected a mapping of settings/,
    );
  });

  it("reports a YAML error at the line that is broken", () => {
    // An over-indented second line: the yaml package points at the value on line 1 that it then tried to extend.
    const indented = write("indented.yaml", "listen: 127.0.0.1:7001\n  log-level: debug\n");
    expect(errorOf(() => loadConfig({ config: indented }, {}))).toMatch(
      /^invalid --config ".*indented\.yaml": not YAML \(.* at line 2, column 12\)$/,
    );
    const unclosed = write("unclosed.yaml", "listen: 127.0.0.1:7001\nlog-level: [debug\n");
    expect(errorOf(() => loadConfig({ config: unclosed }, {}))).toMatch(/ at line 3, column 1\)$/);
  });

  it("never echoes a secret from any source", () => {
    const config = write("secret.yaml", "admin-password: [Hunter-secret-2]\n");
    const message = errorOf(() => loadConfig({ config }, {}));
    expect(message).toMatch(/^invalid admin-password in .*secret\.yaml: expected a text$/);
    expect(message).not.toContain("Hunter");
  });
});

describe("cloud-peer config show", () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    promisify(execFile)(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? "", ...env } }).catch(
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it("prints the effective settings as YAML with secrets masked", async () => {
    const config = write(
      "show.yaml",
      "listen: 0.0.0.0:9000\nadmin-password: Admin-secret-1\nsmtp-url: smtp://user:mail-secret@host:587\nlog-level: debug\n",
    );
    const out = await run(["config", "show", "--config", config, "--data", path.join(dir, "data")], {
      CLOUD_LOG_LEVEL: "warn",
      CLOUD_BODY_LIMIT: "4096",
    });
    expect((out as { code?: number }).code ?? 0).toBe(0);
    expect(out.stdout).not.toContain("secret");
    expect(YAML.parse(out.stdout)).toMatchObject({
      listen: "0.0.0.0:9000",
      data: path.join(dir, "data"),
      "admin-password": "********",
      "smtp-url": "********",
      "log-level": "warn",
      "body-limit": 4096,
      durability: "power-loss",
      database: "sqlite:",
    });
    const pg = await run(["config", "show", "--data", path.join(dir, "data")], {
      CLOUD_DATABASE: "postgres://cloud:db-secret@db.example.com:5432/cloud",
    });
    expect(pg.stdout).not.toContain("db-secret");
    expect(YAML.parse(pg.stdout)).toMatchObject({ database: "postgres://cloud:********@db.example.com:5432/cloud" });
  }, 120_000);

  it("takes sqlite: or a postgres:// URL as the database, and nothing else", () => {
    expect(loadConfig({ database: "postgres://u@h:5432/d" }, {}).database).toBe("postgres://u@h:5432/d");
    expect(loadConfig({}, { CLOUD_DATABASE: "sqlite:" }).database).toBe("sqlite:");
    expect(errorOf(() => loadConfig({}, { CLOUD_DATABASE: "mysql://u:pw-secret@h/d" }))).toMatch(
      /^invalid CLOUD_DATABASE expected sqlite: or a postgres:\/\/ URL$/,
    );
  });

  it("fails like the start on a bad value: one line, exit 2", async () => {
    const out = (await run(["config", "show", "--durability", "fast"])) as { code: number; stderr: string };
    expect(out.code).toBe(2);
    expect(out.stderr.trim()).toBe('cloud-peer: invalid --durability "fast": expected power-loss or process-crash');
  }, 120_000);
});
