// Several cloud-peer processes on one PostgreSQL database and one nats-server, behind a test TCP
// balancer: what the scale-out tests start. Everything lives in temp directories and is stopped by stop().
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnPeerAt } from "../iscp/peer-process.js";
import { startPostgres, type PgServer } from "../../support/postgres.js";
import { startNats, type NatsServer } from "../../support/nats.js";
import { startTcpBalancer, type TcpBalancer } from "../../support/tcp-balancer.js";
import type { TestPeer } from "../harness.js";

const BIN = path.resolve(import.meta.dirname, "../../../bin/cloud-peer.mjs");

export interface ClusterPeer {
  url: string;
  port: number;
  dataDir: string;
  child: ChildProcess;
  exit: Promise<number | null>;
  /** What the process wrote since it listened (warnings at CLOUD_LOG_LEVEL=warn). */
  log(): string;
  /** What the tests' helpers need of a peer: `api(path)` relative to /api. */
  peer: TestPeer;
}

export interface Cluster {
  pg: PgServer;
  nats: NatsServer;
  database: string;
  env: Record<string, string>;
  peers: ClusterPeer[];
  balancer: TcpBalancer;
  /** Starts one more peer on the same database and NATS (added to peers and the balancer), with `env` on top. */
  addPeer(env?: Record<string, string>): Promise<ClusterPeer>;
  /** Runs `cloud-peer <args>` (a maintenance command) against the cluster's database and NATS. */
  command(args: string[]): Promise<{ code: number | null; out: string }>;
  stop(): Promise<void>;
}

/** `fetch` relative to `${url}/api`, with `json` for a JSON body: the shape TestPeer.api has. */
export function apiAt(url: string): TestPeer["api"] {
  return (p, init = {}) => {
    const headers = new Headers(init.headers);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(init.json);
    }
    return fetch(`${url}/api${p}`, { ...init, headers, body });
  };
}

/** A stand-in for TestPeer with only `url` and `api` (all the REST helpers use). */
export const remotePeer = (url: string) => ({ url, api: apiAt(url) }) as unknown as TestPeer;

export async function startCluster(n: number): Promise<Cluster> {
  const pg = await startPostgres();
  const nats = await startNats().catch((e: unknown) => {
    pg.stop();
    throw e;
  });
  const database = await pg.createDatabase();
  const balancer = await startTcpBalancer([]);
  // One issuer for all: a token names the URL clients use (the balancer's), whichever peer signed it.
  const env = { CLOUD_DATABASE: database, CLOUD_NATS: nats.url, CLOUD_PUBLIC_URL: balancer.url };
  const peers: ClusterPeer[] = [];
  const dirs: string[] = [];
  const addPeer = async (extra: Record<string, string> = {}) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cluster-peer-"));
    dirs.push(dataDir);
    const { child, url, exit } = await spawnPeerAt(dataDir, { ...env, ...extra });
    let log = "";
    child.stderr!.on("data", (c) => (log += String(c)));
    child.stdout!.on("data", (c) => (log += String(c)));
    const p = { url, port: Number(new URL(url).port), dataDir, child, exit, peer: remotePeer(url), log: () => log };
    peers.push(p);
    balancer.setBackends(
      peers.filter((x) => x.child.exitCode === null && x.child.signalCode === null).map((x) => x.port),
    );
    return p;
  };
  const stop = async () => {
    await balancer.close();
    for (const p of peers) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGTERM");
      await p.exit;
    }
    await nats.stop();
    pg.stop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  };
  try {
    // One after the other: the first migrates, the others find the schema done.
    for (let i = 0; i < n; i++) await addPeer();
  } catch (e) {
    await stop();
    throw e;
  }
  const command = (args: string[]) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args, "--data", dirs[0]!], {
        env: { ...process.env, CLOUD_LOG_LEVEL: "warn", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (c) => (out += String(c)));
      child.stderr.on("data", (c) => (out += String(c)));
      child.once("exit", (code) => resolve({ code, out }));
    });
  return { pg, nats, database, env, peers, balancer, addPeer, command, stop };
}

/** Polls `check` until it returns true (or `ms` pass); returns how long it took. */
export async function eventually(check: () => Promise<boolean>, ms: number, what: string): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
