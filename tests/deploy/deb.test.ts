// The Debian packages (`npm run package:deb`) built, installed with dpkg -i on this machine, run as their
// system users with a point streamed from the packaged sample connector through the agent into the cloud peer,
// and purged (data and users gone). Needs root and dpkg, as CI has them.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureDemoCloud } from "../../bin/demo-setup.js";
import { freePort } from "../support/nats.js";
import { lockPackages, unlockPackages } from "./dpkg-lock.js";
import { debPackages } from "../support/run-artefacts.js";

const run = promisify(execFile);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "deb-run-"));
const PACKAGES = ["edge-agent", "cloud-peer"] as const;
const children: ChildProcess[] = [];
let debs: Record<(typeof PACKAGES)[number], string>;

const sh = (cmd: string, args: string[]) =>
  run(cmd, args, { timeout: 300_000, maxBuffer: 64 << 20 }).then((r) => r.stdout);
const exists = (cmd: string, args: string[]) =>
  run(cmd, args).then(
    () => true,
    () => false,
  );

/** Runs a packaged command as its system user, with a folder of its own. */
function asUser(user: string, cmd: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(
    "runuser",
    [
      "-u",
      user,
      "--",
      "env",
      `PATH=${process.env.PATH}`,
      ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
      cmd,
      ...args,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  child.stdout!.on("data", (c: Buffer) => (log += c));
  child.stderr!.on("data", (c: Buffer) => (log += c));
  Object.defineProperty(child, "log", { get: () => log });
  children.push(child);
  return child;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

beforeAll(async () => {
  // `npm run package:deb -- --fast`, made once for the run (tests/support/run-artefacts.ts).
  debs = await debPackages();
  await lockPackages();
}, 600_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await run("pkill", ["-KILL", "-f", work]).catch(() => undefined);
  for (const p of PACKAGES) await run("pkill", ["-KILL", "-u", p]).catch(() => undefined);
  // Never leave the packages on the machine, whatever failed.
  for (const p of PACKAGES)
    if (await exists("dpkg", ["-s", p])) await run("dpkg", ["--purge", p]).catch(() => undefined);
  fs.rmSync(work, { recursive: true, force: true });
  unlockPackages();
}, 120_000);

describe("Debian packages", () => {
  it("hold each package's own code: the agent carries no sqlite3, no PostgreSQL driver and no console", async () => {
    const agent = await sh("dpkg-deb", ["-c", debs["edge-agent"]]);
    const cloud = await sh("dpkg-deb", ["-c", debs["cloud-peer"]]);
    for (const absent of ["node_modules/sqlite3/", "node_modules/pg/", "/dist/console/", "/dist/cloud/"])
      expect(agent, absent).not.toContain(absent);
    for (const present of [
      "./usr/lib/edge-agent/node_modules/lmdb/",
      "./usr/bin/edge-agent -> ../lib/edge-agent/bin/edge-agent.mjs",
      "./usr/bin/agentctl",
      "./lib/systemd/system/edge-agent.service",
      "./etc/default/edge-agent",
      "/dist/runtime/connectors/sample-connector.js",
    ])
      expect(agent, present).toContain(present);
    for (const present of [
      "node_modules/sqlite3/",
      "node_modules/pg/",
      "/dist/console/index.html",
      "./usr/bin/cloud-peer",
    ])
      expect(cloud, present).toContain(present);
    for (const deb of Object.values(debs))
      expect(await sh("dpkg-deb", ["-c", deb]), "source maps and TypeScript declarations stay out").not.toMatch(
        /\.(map|d\.ts)\n/,
      );
    const control = await sh("dpkg-deb", ["-f", debs["edge-agent"], "Depends", "Architecture", "Version"]);
    expect(control).toMatch(/^Depends: nodejs \(>= 20\.17\)/m);
    expect(control).toMatch(/^Architecture: (amd64|arm64)$/m);
    expect(await sh("dpkg-deb", ["-I", debs["edge-agent"], "conffiles"])).toBe("/etc/default/edge-agent\n");
  }, 120_000);

  it("install with dpkg -i, run as their system users, stream a point through, and purge", async () => {
    await run("dpkg", ["-i", debs["edge-agent"], debs["cloud-peer"]], { timeout: 300_000 });
    for (const p of PACKAGES) {
      expect((await sh("getent", ["passwd", p])).split(":")[6]?.trim()).toBe("/usr/sbin/nologin");
      const st = fs.statSync(`/var/lib/${p}`);
      expect((st.mode & 0o777).toString(8)).toBe("700");
      expect((await sh("stat", ["-c", "%U:%G", `/var/lib/${p}`])).trim()).toBe(`${p}:${p}`);
      expect(fs.readFileSync(`/lib/systemd/system/${p}.service`, "utf8")).toMatch(
        new RegExp(`^ExecStart=/usr/bin/${p} `, "m"),
      );
    }
    expect((await sh("/usr/bin/agentctl", ["--version"])).trim()).not.toBe("");

    // Each as its own user, on folders it owns (as the units' StateDirectory and RuntimeDirectory give them).
    const cloudDir = path.join(work, "cloud");
    const agentDir = path.join(work, "agent");
    fs.mkdirSync(cloudDir);
    fs.mkdirSync(agentDir);
    fs.chmodSync(work, 0o755);
    await run("chown", ["cloud-peer:cloud-peer", cloudDir]);
    await run("chown", ["edge-agent:edge-agent", agentDir]);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const cloud = asUser("cloud-peer", "/usr/bin/cloud-peer", ["--data", cloudDir, "--listen", `127.0.0.1:${port}`], {
      CLOUD_ADMIN_PASSWORD: "Packaged-admin-1",
    });
    const token = await until("the cloud peer", async () => {
      const r = await fetch(`${url}/api/auth/oauth2/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "password", username: "admin", password: "Packaged-admin-1" }),
      });
      return r.ok ? ((await r.json()) as { access_token: string }).access_token : undefined;
    });
    expect(await exists("pgrep", ["-u", "cloud-peer", "-f", `cloud-peer --data ${cloudDir}`])).toBe(true);
    const api = async (p: string, init: { method?: string; json?: unknown } = {}) => {
      const r = await fetch(`${url}/api${p}`, {
        method: init.method ?? "GET",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: init.json ? JSON.stringify(init.json) : undefined,
      });
      if (!r.ok) throw new Error(`${p}: ${r.status} ${await r.text()}`);
      return r.json();
    };
    const demo = await ensureDemoCloud(work, api);

    const socket = path.join(agentDir, "agent.sock");
    const connectors = "/usr/lib/edge-agent/dist/runtime/connectors";
    const agent = asUser("edge-agent", "/usr/bin/edge-agent", [
      "--socket",
      socket,
      "--data",
      path.join(agentDir, "data"),
      "--allow-dir",
      connectors,
      "--allow-dir",
      path.dirname(process.execPath),
    ]);
    await until("the agent's socket", async () => (fs.existsSync(socket) ? true : undefined));
    expect(await exists("pgrep", ["-u", "edge-agent", "-f", `edge-agent --socket ${socket}`])).toBe(true);
    const ctl = (...args: string[]) => sh("/usr/bin/agentctl", ["--socket", socket, ...args]);
    await ctl(
      "config",
      "connection",
      "-m",
      JSON.stringify({
        server_url: url,
        project_uuid: demo.projectUuid,
        edge_uuid: demo.edgeUuid,
        client_secret: demo.edgeSecret,
      }),
    );
    await ctl("config", "upstream", "-c", JSON.stringify({ id: "rt", persist: true, qos: "partial" }));
    await ctl(
      "config",
      "device-connector",
      "upstream",
      "-c",
      JSON.stringify({
        id: "sample",
        format: "iscp-v2-compat",
        dest_ids: ["rt"],
        ipc: { type: "fifo", path: path.join(agentDir, "data", "sample.fifo") },
        launch: {
          command: process.execPath,
          args: [
            `${connectors}/sample-connector.js`,
            "--path",
            "${ipc.path}",
            "--name",
            "packaged/counter",
            "--type",
            "int64",
            "--size",
            "8",
            "--rate",
            "20",
          ],
        },
      }),
    );
    const points = await until(
      "points in the cloud",
      async () => {
        const list = (await (
          await fetch(`${url}/api/v1/projects/${demo.projectUuid}/measurements`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).json()) as { items: { uuid: string }[] };
        const m = list.items[0];
        if (!m) return undefined;
        const text = await (
          await fetch(`${url}/api/v1/projects/${demo.projectUuid}/data?name=${m.uuid}`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).text();
        const n = text.split("\n").filter((l) => l.includes('"data_id":"packaged/counter"')).length;
        return n > 0 ? n : undefined;
      },
      90_000,
    ).catch((e: Error) => {
      throw new Error(
        `${e.message}\nagent: ${(agent as unknown as { log: string }).log}\ncloud: ${(cloud as unknown as { log: string }).log}`,
      );
    });
    expect(points).toBeGreaterThan(0);

    // runuser passes SIGTERM on to the command it runs.
    for (const c of [agent, cloud]) c.kill("SIGTERM");
    await Promise.all(
      [agent, cloud].map((c) =>
        c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once("exit", r)) : undefined,
      ),
    );
    expect(await exists("pgrep", ["-f", work])).toBe(false);
    // Purge takes the data folders and the users with it; the packages are gone.
    await run("dpkg", ["--purge", "edge-agent", "cloud-peer"], { timeout: 120_000 });
    for (const p of PACKAGES) {
      expect(fs.existsSync(`/var/lib/${p}`), p).toBe(false);
      expect(await exists("getent", ["passwd", p]), p).toBe(false);
      expect(fs.existsSync(`/usr/lib/${p}`), p).toBe(false);
      expect(fs.existsSync(`/etc/default/${p}`), p).toBe(false);
    }
  }, 300_000);
});
