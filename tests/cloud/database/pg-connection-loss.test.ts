// A cloud peer process on PostgreSQL keeps running when its database connections are cut under load (a TCP proxy
// cut, then the server stopped with `-m immediate`): REST calls answer 503 `{type, title}` while the database is
// away, /metrics still answers (the database gauge down), and everything works again once it is back.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { postgresInstalled, startPostgres, type PgServer } from "../../support/postgres.js";
import { startTcpBalancer, type TcpBalancer } from "../../support/tcp-balancer.js";
import { spawnPeerAt } from "../iscp/peer-process.js";
import { apiAt } from "../cluster/helpers.js";

const EDGE = "5b0a3c4e-1f2d-4c3b-9a8e-7d6c5b4a3f21";

let pg: PgServer | undefined;
let proxy: TcpBalancer | undefined;
let peer: Awaited<ReturnType<typeof spawnPeerAt>> | undefined;
let dataDir = "";
let log = "";

beforeAll(async () => {
  if (!postgresInstalled()) return;
  pg = await startPostgres();
  const direct = new URL(await pg.createDatabase());
  proxy = await startTcpBalancer([pg.port]);
  direct.port = String(proxy.port);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "pg-loss-"));
  peer = await spawnPeerAt(dataDir, { CLOUD_DATABASE: direct.toString() });
  peer.child.stderr!.on("data", (c) => (log += String(c)));
  peer.child.stdout!.on("data", (c) => (log += String(c)));
}, 120_000);
afterAll(async () => {
  peer?.child.kill("SIGKILL");
  await peer?.exit;
  await proxy?.close();
  pg?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}, 120_000);

async function token(api: ReturnType<typeof apiAt>): Promise<string> {
  const r = await api("/auth/oauth2/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "password", username: "admin", password: "Admin-password-1" }).toString(),
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { access_token: string }).access_token;
}

/** Writers creating measurements (a transaction each) until stopped: connections are checked out when the cut comes. */
function load(api: ReturnType<typeof apiAt>, auth: string) {
  const statuses: number[] = [];
  let running = true;
  const create = () =>
    api("/v1/measurements", {
      method: "POST",
      headers: { authorization: `Bearer ${auth}` },
      json: { basetime: "2026-01-01T00:00:00Z", basetime_type: "manual", edge_uuid: EDGE },
    });
  const workers = Array.from({ length: 8 }, async () => {
    while (running) {
      const r = await create().catch(() => undefined);
      if (r) {
        statuses.push(r.status);
        await r.body?.cancel();
      }
    }
  });
  return {
    create,
    statuses,
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

async function expectAnswersWhileAway(create: () => Promise<Response>) {
  const r = await create();
  const body = (await r.json()) as { type?: string; title?: string };
  expect(r.status, JSON.stringify(body)).toBe(503);
  expect(typeof body.type).toBe("string");
  expect(body.title).toMatch(/database/);
  const m = await fetch(`${peer!.url}/metrics`);
  const text = await m.text();
  expect(m.status, text).toBe(200);
  expect(text).toMatch(/^cloud_database_up 0$/m);
}

it.runIf(postgresInstalled())(
  "survives a cut proxy and a PostgreSQL stopped with -m immediate, answering 503 meanwhile",
  async () => {
    const api = apiAt(peer!.url);
    const auth = await token(api);
    const exited = () => peer!.child.exitCode !== null || peer!.child.signalCode !== null;
    // While the database is away: the peer stays up, answers 503 in the API's shape, and nothing under load got
    // any other 5xx.
    const ridesOutOutage = async (w: ReturnType<typeof load>) => {
      await new Promise((r) => setTimeout(r, 1500));
      expect(exited(), log).toBe(false);
      await expectAnswersWhileAway(w.create);
      await w.stop();
      expect(
        w.statuses.filter((s) => s >= 500 && s !== 503),
        log,
      ).toEqual([]);
    };

    let w = load(api, auth);
    await expect.poll(() => w.statuses.filter((s) => s === 201).length, { timeout: 30_000 }).toBeGreaterThan(20);
    // The proxy cuts every connection and takes no new one to the server.
    proxy!.setBackends([1]);
    proxy!.cut();
    await ridesOutOutage(w);
    proxy!.setBackends([pg!.port]);
    await expect.poll(async () => (await w.create()).status, { timeout: 30_000, interval: 500 }).toBe(201);

    w = load(api, auth);
    await expect.poll(() => w.statuses.filter((s) => s === 201).length, { timeout: 30_000 }).toBeGreaterThan(20);
    // SIGQUIT is PostgreSQL's immediate shutdown (pg_ctl stop -m immediate): every backend ends at once.
    const postmaster = Number(fs.readFileSync(path.join(pg!.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
    process.kill(postmaster, "SIGQUIT");
    await expect
      .poll(() => fs.existsSync(path.join(pg!.dir, "data", "postmaster.pid")), { timeout: 30_000 })
      .toBe(false);
    await ridesOutOutage(w);
    pg!.resume();
    await expect.poll(async () => (await w.create()).status, { timeout: 30_000, interval: 500 }).toBe(201);
    expect(exited(), log).toBe(false);
  },
  150_000,
);
