// The cloud peer of the agent benchmark, started as a user would: `bin/cloud-peer.mjs` as a child process (its
// own CPU and memory in /proc) on a temp data directory, on a port picked free first (QUIC on the same number
// over UDP), its URL read from its banner. An API token comes from `cloud-peer token create`, the project and
// the edge from its REST API. `--commit-trace` makes it append "<CLOCK_MONOTONIC ns> <points>" per committed
// batch of iSCP chunks: the end of a run and each point's commit time, on the clock the connector stamps with.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import dgram from "node:dgram";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { MALLOC_ENV } from "../malloc-env.js";
import { ROOT, nodeArgs, stopChild } from "./children.js";

export interface CloudInfo {
  url: string;
  token: string;
  projectUuid: string;
  edgeUuid: string;
  edgeSecret: string;
}

/** What the commit trace says so far. */
export interface CommitTrace {
  /** Points in chunks committed through the real-time (iSCP) path. */
  points: number;
  /** When the last batch committed (CLOCK_MONOTONIC ns), 0 if none. */
  lastCommitNs: number;
  /** Each committed batch: [CLOCK_MONOTONIC ns, points], in commit order. */
  commits: Array<[number, number]>;
}

export interface CloudPeer {
  child: ChildProcess;
  info: CloudInfo;
  trace(): CommitTrace;
  stop(): Promise<void>;
}

const CLI = path.join(ROOT, "bin/cloud-peer.mjs");
const START_MS = 60_000;

/** A TCP port that is free on 127.0.0.1 for both TCP and UDP (QUIC listens on the HTTP port's number). */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = net.createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
      s.on("error", reject);
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const u = dgram.createSocket("udp4");
      u.once("error", () => resolve(false));
      u.bind(port, "127.0.0.1", () => u.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error("no free port");
}

/** Resolves with the URL of the banner "cloud-peer listening on URL ..." on the child's stdout. */
function banner(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`cloud peer did not start within ${START_MS / 1000} s`)), START_MS);
    child.once("exit", (code) => reject(new Error(`cloud peer exited (${code}) before it was listening`)));
    child.stdout!.on("data", (b: Buffer) => {
      out += b.toString("utf8");
      const m = /cloud-peer listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        out = "";
        resolve(m[1]!);
      }
    });
  });
}

/** Reads the commit trace file (lines may still be appended: a partial last line is left for later). */
export function readCommitTrace(file: string): CommitTrace {
  const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
  const commits: Array<[number, number]> = [];
  let points = 0;
  for (const line of text.split("\n")) {
    const [ns, n] = line.split(" ").map(Number);
    if (!Number.isFinite(ns) || !Number.isFinite(n) || n === undefined) continue;
    commits.push([ns!, n]);
    points += n;
  }
  return { points, lastCommitNs: commits[commits.length - 1]?.[0] ?? 0, commits };
}

export interface CloudPeerOptions {
  quic: boolean;
  /** More environment (e.g. CLOUD_DATABASE, CLOUD_NATS, CLOUD_PUBLIC_URL for one instance of several). */
  env?: NodeJS.ProcessEnv;
  /**
   * Make the API token, the bench's group, project and edge (default true). Further instances on a shared
   * database skip it: their info has only the URL.
   */
  setup?: boolean;
  /** host:port to listen on (a restart on the same address); default a free port on 127.0.0.1. */
  listen?: string;
}

export async function startCloudPeer(dir: string, opts: CloudPeerOptions): Promise<CloudPeer> {
  fs.mkdirSync(dir, { recursive: true });
  const listen = opts.listen ?? `127.0.0.1:${await freePort()}`;
  const traceFile = path.join(dir, "commits.trace");
  // A known admin password: the peer does not print a temporary one; the run signs in with a token instead.
  // The malloc settings as deploy/cloud-peer.service runs it (a variable set for the bench wins).
  const env = {
    ...MALLOC_ENV,
    ...process.env,
    CLOUD_ADMIN_PASSWORD: `Bench-${crypto.randomBytes(12).toString("hex")}`,
    ...opts.env,
  };
  const args = [
    CLI,
    "--listen",
    listen,
    "--data",
    dir,
    "--log-level",
    "warn",
    "--commit-trace",
    traceFile,
    ...(opts.quic ? ["--iscp-quic-listen", listen] : []),
  ];
  const child = spawn(process.execPath, [...nodeArgs(), ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
    env,
  });
  try {
    const url = await banner(child);
    child.stdout!.resume(); // later output is not read; it must not fill the pipe
    const trace = () => readCommitTrace(traceFile);
    const stop = () => stopChild(child, "SIGTERM", 10_000);
    if (opts.setup === false)
      return { child, info: { url, token: "", projectUuid: "", edgeUuid: "", edgeSecret: "" }, trace, stop };
    const made = spawnSync(
      process.execPath,
      [CLI, "token", "create", "--user", "admin", "--name", "bench", "--data", dir],
      { cwd: ROOT, env, encoding: "utf8" },
    );
    if (made.status !== 0) throw new Error(`cloud-peer token create failed: ${made.stderr.trim()}`);
    const token = made.stdout.trim();
    const api = async (p: string, json: unknown) => {
      const res = await fetch(`${url}/api${p}`, {
        method: "POST",
        headers: { "X-Intdash-Token": token, "content-type": "application/json" },
        body: JSON.stringify(json),
      });
      if (res.status >= 400) throw new Error(`POST ${p}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, string>;
    };
    const group = await api("/auth/groups", { name: "bench" });
    const project = await api(`/auth/groups/${group.uuid}/projects`, { name: "bench" });
    const edge = await api("/auth/edges", { name: "bench-edge", nickname: "Benchmark edge" });
    await api(`/auth/projects/${project.uuid}/edges`, { edge_name: edge.name, nickname: "Benchmark edge" });
    return {
      child,
      info: { url, token, projectUuid: project.uuid!, edgeUuid: edge.uuid!, edgeSecret: edge.client_secret! },
      trace,
      stop,
    };
  } catch (e) {
    await stopChild(child, "SIGKILL");
    throw e;
  }
}
