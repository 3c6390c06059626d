// cloud-peer migrate-store on a live demo, as an operator moves it: the demo (`npm start`: cloud peer on SQLite,
// edge agent, sample connector streaming over iSCP) stores a few hundred points and is stopped with SIGTERM; the
// store is copied to PostgreSQL; a cloud peer on PostgreSQL serves the same points, the admin and the edge still
// sign in, and the demo's agent, started again and pointed at the new peer, streams on into it.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../../../runtime/cli/client.js";
import { spawnPeerAt } from "../iscp/peer-process.js";
import { freePort } from "../../support/nats.js";
import { startPostgres, type PgServer } from "../../support/postgres.js";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../../..");
const BIN = path.join(ROOT, "bin/cloud-peer.mjs");
// The demo plays a vehicle: its speed (50 Hz) stands for every stream.
const COUNTER = "vehicle/speed";

const children: ChildProcess[] = [];

/** Stops a child as an operator does (SIGTERM; SIGKILL if it is still there after `graceMs`); returns its exit code. */
async function stop(child: ChildProcess, graceMs = 60_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const gone = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  try {
    return await gone;
  } finally {
    clearTimeout(timer);
  }
}

/** The vehicle speed points in the project, per measurement, as `measurement time value` lines (sorted). */
async function counterPoints(url: string, token: string, project: string): Promise<string[]> {
  const get = async (p: string) => {
    const r = await fetch(`${url}/api/v1/projects/${project}${p}`, { headers: { "X-Intdash-Token": token } });
    expect(r.status, p).toBe(200);
    return r;
  };
  const ms = ((await (await get("/measurements?per_page=200")).json()) as { items: { uuid: string }[] }).items;
  const out: string[] = [];
  for (const m of ms) {
    for (const line of (await (await get(`/data?name=${m.uuid}&time_format=ns`)).text()).split("\n")) {
      if (!line.includes(`"data_id":"${COUNTER}"`)) continue;
      const p = JSON.parse(line) as { data: { d: string } };
      out.push(`${m.uuid} ${/^\{"time":"?(-?\d+)/.exec(line)![1]} ${p.data.d}`);
    }
  }
  return out.sort();
}

async function form(
  url: string,
  body: Record<string, string>,
): Promise<{ status: number; body: { access_token?: string } }> {
  const r = await fetch(`${url}/api/auth/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body),
  });
  return { status: r.status, body: (await r.json()) as { access_token?: string } };
}

describe("cloud-peer migrate-store on a live demo", () => {
  let server: PgServer;
  let dir: string;
  beforeAll(async () => {
    server = await startPostgres();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "migrate-live-"));
  }, 120_000);
  afterAll(async () => {
    // SIGTERM first: the demo and the agent stop the processes they started, which a SIGKILL would leave behind.
    for (const c of children) await stop(c, 10_000);
    server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it("moves the demo's streamed points, admin and edge to PostgreSQL, where the agent streams on", async () => {
    // The demo as `npm start` runs it, on a data directory of its own.
    const demo = spawn(process.execPath, ["dist/bin/demo.js"], {
      cwd: ROOT,
      env: { ...process.env, DEMO_DATA: dir, CLOUD_LISTEN: `127.0.0.1:${await freePort()}` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(demo);
    let out = "";
    demo.stdout!.on("data", (c: Buffer) => (out += c.toString()));
    demo.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    await expect.poll(() => out, { timeout: 90_000, interval: 200 }).toContain("Ctrl-C stops everything.");
    const demoUrl = /cloud peer\s+(http\S+)\/api/.exec(out)![1]!;
    const token = fs.readFileSync(path.join(dir, "admin-token"), "utf8").trim();
    const password = fs.readFileSync(path.join(dir, "admin-password"), "utf8").trim();
    const { projectUuid, edgeUuid, edgeSecret } = JSON.parse(
      fs.readFileSync(path.join(dir, "demo.json"), "utf8"),
    ) as Record<string, string>;
    // A few hundred points stored (the sample connector sends 100 a second).
    await expect
      .poll(async () => (await counterPoints(demoUrl, token, projectUuid)).length, { timeout: 60_000, interval: 500 })
      .toBeGreaterThanOrEqual(300);
    expect(await stop(demo)).toBe(0);

    // What the SQLite store holds once everything stopped, read through a cloud peer on it.
    const cloudData = path.join(dir, "cloud");
    const onSqlite = await spawnPeerAt(cloudData, { CLOUD_DATABASE: "sqlite:" });
    children.push(onSqlite.child);
    const before = await counterPoints(onSqlite.url, token, projectUuid);
    expect(before.length).toBeGreaterThanOrEqual(300);
    expect(await stop(onSqlite.child)).toBe(0);

    const url = await server.createDatabase();
    const migrated = await run(process.execPath, [BIN, "migrate-store", "--from", `sqlite:${cloudData}`, "--to", url]);
    expect(migrated.stdout).toMatch(/^meas_chunk_payloads: \d+ rows$/m);

    // The cloud peer on PostgreSQL (a fresh data directory: nothing is read from the SQLite one).
    const pgData = path.join(dir, "cloud-pg");
    const onPg = await spawnPeerAt(pgData, { CLOUD_DATABASE: url });
    children.push(onPg.child);
    expect(fs.existsSync(path.join(pgData, "cloud.db"))).toBe(false);
    expect(await counterPoints(onPg.url, token, projectUuid)).toEqual(before);
    // The admin signs in with the demo's password; the edge's secret gets a token.
    const admin = await form(onPg.url, { grant_type: "password", username: "admin", password });
    expect(admin.status, JSON.stringify(admin.body)).toBe(200);
    const edge = await form(onPg.url, {
      grant_type: "client_credentials",
      client_id: edgeUuid!,
      client_secret: edgeSecret!,
    });
    expect(edge.status, JSON.stringify(edge.body)).toBe(200);
    const me = await fetch(`${onPg.url}/api/auth/users/me`, {
      headers: { Authorization: `Bearer ${admin.body.access_token}` },
    });
    expect(me.status).toBe(200);

    // The demo's agent started again (its configuration kept in its data directory), pointed at the new peer.
    const agentData = path.join(dir, "agent");
    const socket = path.join(agentData, "agent.sock");
    const agent = spawn(
      process.execPath,
      [
        path.join(ROOT, "bin/edge-agent.mjs"),
        "--socket",
        socket,
        "--data",
        agentData,
        "--allow-dir",
        path.dirname(process.execPath),
        "--log-level",
        "warn",
      ],
      {
        cwd: ROOT,
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
    children.push(agent);
    const api = new ApiClient(socket);
    await expect
      .poll(async () => (await api.get("/version").catch(() => undefined))?.status, { timeout: 60_000, interval: 200 })
      .toBe(200);
    const conn = await api.request("PATCH", "/connection", { server_url: onPg.url });
    expect(conn.status, JSON.stringify(conn.body)).toBe(200);
    await expect
      .poll(async () => (await counterPoints(onPg.url, token, projectUuid)).length, { timeout: 60_000, interval: 500 })
      .toBeGreaterThan(before.length + 100);
    // Nothing that was moved is lost or changed by the new stream.
    const after = new Set(await counterPoints(onPg.url, token, projectUuid));
    expect(before.filter((p) => !after.has(p))).toEqual([]);

    expect(await stop(agent)).toBe(0);
    expect(await stop(onPg.child)).toBe(0);
  }, 300_000);
});
