// deploy/*.service: each unit passes `systemd-analyze verify` (the commands that need root and systemd, such as
// systemctl and useradd in docs/guide/device.md, are checked only this way), its paths agree with the
// directories systemd makes, and every flag and variable it uses is one the command accepts.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { MALLOC_ENV } from "../../runtime/malloc-env.js";
import { ROOT, directive, execStart, flagValue, unitText, verifyUnit, type UnitName } from "./unit-file.js";

const run = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "units-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const help = async (name: UnitName) =>
  (await run(process.execPath, [path.join(ROOT, "bin", `${name}.mjs`), "--help"])).stdout;

it("has systemd-analyze (CI installs systemd for it)", async () => {
  await expect(
    run("systemd-analyze", ["--version"]),
    "systemd-analyze not found: install systemd",
  ).resolves.toBeDefined();
});

describe.each(["edge-agent", "cloud-peer"] as const)("deploy/%s.service", (name) => {
  const text = unitText(name);

  it("passes systemd-analyze verify", async () => {
    expect(await verifyUnit(dir, name, text)).toEqual([]);
  });

  it("runs the installed command as its own user, restarts it on failure, and keeps the file system read-only", () => {
    expect(execStart(text).program).toBe(`/usr/local/bin/${name}`);
    expect(directive(text, "User")).toBe(name);
    expect(directive(text, "Group")).toBe(name);
    expect(directive(text, "Restart")).toBe("on-failure");
    expect(directive(text, "ProtectSystem")).toBe("strict");
    expect(directive(text, "NoNewPrivileges")).toBe("yes");
    expect(directive(text, "EnvironmentFile")).toBe(`-/etc/default/${name}`);
  });

  it("keeps its data where systemd makes the state directory", () => {
    expect(flagValue(text, "--data")).toBe(`/var/lib/${directive(text, "StateDirectory")}`);
  });

  it("uses only flags the command accepts, and its example environment file only variables it reads", async () => {
    const usage = await help(name);
    const flags = execStart(text).args.filter((a) => a.startsWith("--"));
    expect(flags.length).toBeGreaterThan(0);
    for (const f of flags) expect(usage, f).toContain(`${f} `);
    const env = fs.readFileSync(path.join(ROOT, "deploy", `${name}.env`), "utf8");
    const names = [...env.matchAll(/^#?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(3);
    for (const n of names) expect(usage, n).toContain(n);
  });
});

it("edge-agent.service puts the socket in systemd's runtime directory and lets the agent write intdash's FIFO folder", () => {
  const text = unitText("edge-agent");
  expect(path.dirname(flagValue(text, "--socket"))).toBe(`/run/${directive(text, "RuntimeDirectory")}`);
  expect(directive(text, "RuntimeDirectoryMode")).toBe("0750");
  expect(directive(text, "ReadWritePaths")).toBe("/run/intdash");
  expect(directive(text, "ExecStartPre")).toMatch(/ -o edge-agent -g edge-agent \/run\/intdash$/);
  // SIGTERM to the agent alone: it stops its connectors itself.
  expect(directive(text, "KillMode")).toBe("mixed");
});

it.each(["edge-agent", "cloud-peer"] as const)(
  "%s.service runs it with the malloc settings the benchmarks measure it with",
  (name) => {
    const text = unitText(name);
    const set = Object.fromEntries(
      directive(text, "Environment")
        .split(/\s+/)
        .map((kv) => kv.split("=") as [string, string]),
    );
    expect(set).toEqual(MALLOC_ENV);
    // Before the environment file, so an operator's /etc/default/<name> wins.
    expect(text.indexOf("Environment=")).toBeLessThan(text.indexOf("EnvironmentFile="));
  },
);

it("the check fails on a broken unit: a misspelt value, an unknown key, a missing program", async () => {
  const text = unitText("edge-agent");
  const broken = text
    .replace("ProtectSystem=strict", "ProtectSystem=strikt")
    .replace("TimeoutStopSec=", "TimeoutStopSecs=");
  const found = await verifyUnit(dir, "edge-agent", broken);
  expect(found.join("\n")).toMatch(/strikt/);
  expect(found.join("\n")).toMatch(/TimeoutStopSecs/);
  const missing = await verifyUnit(
    dir,
    "edge-agent",
    text.replace("ExecStartPre=+/usr/bin/install", "ExecStartPre=+/usr/bin/no-such-install"),
  );
  expect(missing.join("\n")).toMatch(/no-such-install/);
});
