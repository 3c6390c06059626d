// End-to-end harness: the real cloud peer (a project and an edge made through its API), the real edge
// agent (in this process, or as a child process that a test may kill -9) configured through its command
// API, real FIFOs written by the test as a device connector would, and the cloud's data read back.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { open, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { apiClient, ensureDemoCloud, type DemoState } from "../../bin/demo-setup.js";
import { ApiClient } from "../../runtime/cli/client.js";
import { startAgent, type RunningAgent } from "../../runtime/daemon.js";
import { TEST_ALLOW_DIRS } from "../support/agent.js";
import { adminToken } from "../cloud/accounts/helpers.js";
import { startTestPeer, type TestPeer } from "../cloud/harness.js";
import type { ConfigInput } from "../../cloud/config.js";

export interface CloudPoint {
  time: bigint;
  type: string;
  name: string;
  payload: Buffer;
}

export interface Stack {
  dir: string;
  peer: TestPeer;
  cloud: DemoState & { token: string };
  agentApi: ApiClient;
  /** Set when the agent runs in this process. */
  agent?: RunningAgent;
  /** Set when the agent runs as a child process. */
  child?: ChildProcess;
  fifo(name: string): string;
  startAgent(): Promise<void>;
  stopAgent(signal?: NodeJS.Signals): Promise<void>;
  /** Restarts the cloud peer on the same data and port (after stopCloud). */
  startCloud(): Promise<void>;
  stopCloud(): Promise<void>;
  /** Connection (edge credentials, project) and transport. */
  connect(protocol?: "websocket" | "quic"): Promise<void>;
  put(collection: string, item: Record<string, unknown>): Promise<void>;
  measurements(): Promise<{ uuid: string; basetime: string; status: string; received_data_points: number }[]>;
  points(measurementUuid: string): Promise<CloudPoint[]>;
  close(): Promise<void>;
}

const ROOT = path.resolve(import.meta.dirname, "../..");

export interface StackOptions {
  agent?: "in-process" | "child";
  /** Serve iSCP over QUIC too, on the HTTP port's number over UDP (where the agent looks for it). */
  quic?: boolean;
  /** Node arguments for the child agent (e.g. `--import` of a loader hook). */
  agentNodeArgs?: string[];
  /** Cloud peer settings beyond the defaults (e.g. a short accessTokenTtl). */
  cloud?: ConfigInput;
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-"));
  const cloudDir = path.join(dir, "cloud");
  fs.mkdirSync(cloudDir);
  let peer = await startTestPeer({ dataDir: cloudDir, config: opts.cloud });
  const port = Number(new URL(peer.url).port);
  const cloudConfig = {
    ...opts.cloud,
    listen: `127.0.0.1:${port}`,
    ...(opts.quic ? { iscpQuicListen: `127.0.0.1:${port}` } : {}),
  };
  if (opts.quic) {
    await peer.close();
    peer = await startTestPeer({ dataDir: cloudDir, config: cloudConfig });
  }
  const token = await adminToken(peer);
  const demo = await ensureDemoCloud(dir, apiClient(peer.url, token));
  const socketPath = path.join(dir, "agent.sock");
  const agentData = path.join(dir, "agent");
  const api = new ApiClient(socketPath);
  const call = async (method: string, p: string, body?: unknown) => {
    const r = await api.request(method, p, body);
    if (r.status >= 400) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  const s: Stack = {
    dir,
    peer,
    cloud: { ...demo, token },
    agentApi: api,
    fifo: (name) => path.join(dir, `${name}.fifo`),
    async startAgent() {
      if (opts.agent !== "child") {
        s.agent = await startAgent({ socketPath, dataDir: agentData, allowDirs: TEST_ALLOW_DIRS });
        return;
      }
      const child = spawn(
        process.execPath,
        [
          ...(opts.agentNodeArgs ?? []),
          path.join(ROOT, "bin/edge-agent.mjs"),
          "--socket",
          socketPath,
          "--data",
          agentData,
          "--log-level",
          "warn",
          ...TEST_ALLOW_DIRS.flatMap((d) => ["--allow-dir", d]),
        ],
        {
          cwd: ROOT,
          stdio: ["ignore", "ignore", "inherit"],
        },
      );
      s.child = child;
      // A loaded machine takes a while to compile the agent's TypeScript: up to a minute.
      for (const end = Date.now() + 60_000; Date.now() < end; ) {
        if (child.exitCode !== null) throw new Error(`edge-agent exited with ${child.exitCode}`);
        if ((await api.get("/version").catch(() => undefined))?.status === 200) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error("edge-agent did not start");
    },
    async stopAgent(signal = "SIGTERM") {
      if (s.agent) await s.agent.close();
      s.agent = undefined;
      const child = s.child;
      s.child = undefined;
      if (child && child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((r) => child.once("exit", r));
        child.kill(signal);
        await gone;
      }
    },
    async stopCloud() {
      await s.peer.close();
    },
    async startCloud() {
      peer = await startTestPeer({ dataDir: cloudDir, config: cloudConfig });
      s.peer = peer;
    },
    async connect(protocol = "websocket") {
      await call("PATCH", "/connection", {
        server_url: s.peer.url,
        project_uuid: demo.projectUuid,
        edge_uuid: demo.edgeUuid,
        client_secret: demo.edgeSecret,
      });
      await call("PATCH", "/transport", { protocol });
    },
    async put(collection, item) {
      const existing = await api.get(`${collection}/${encodeURIComponent(String(item.id))}`);
      const { id: _id, ...rest } = item;
      if (existing.status === 200) await call("PATCH", `${collection}/${encodeURIComponent(String(item.id))}`, rest);
      else await call("POST", collection, item);
    },
    ...cloudData(() => s.peer.url, token, demo.projectUuid),
    async close() {
      await s.stopAgent("SIGKILL").catch(() => undefined);
      await s.peer.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await s.startAgent();
  } catch (e) {
    await s.close();
    throw e;
  }
  return s;
}

/** A project's measurements and their points, read back through the cloud's REST API (`url` may change on restart). */
export function cloudData(
  url: () => string,
  token: string,
  projectUuid: string,
): Pick<Stack, "measurements" | "points"> {
  const cloudGet = async (p: string) => {
    const r = await fetch(`${url()}/api${p}`, { headers: { "X-Intdash-Token": token } });
    if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${await r.text()}`);
    return r;
  };
  return {
    async measurements() {
      const r = await cloudGet(`/v1/projects/${projectUuid}/measurements?per_page=200`);
      return ((await r.json()) as { items: never[] }).items;
    },
    async points(uuid) {
      const r = await cloudGet(`/v1/projects/${projectUuid}/data?name=${uuid}&time_format=ns`);
      const out: CloudPoint[] = [];
      for (const line of (await r.text()).split("\n")) {
        if (line === "") continue;
        const p = JSON.parse(line) as { data_type: string; data_id: string; data: { d: string } };
        // Nanosecond epoch times exceed 2^53: read the digits, not JSON.parse's double.
        const time = BigInt(/^\{"time":"?(-?\d+)/.exec(line)![1]!);
        out.push({ time, type: p.data_type, name: p.data_id, payload: Buffer.from(p.data.d, "base64") });
      }
      return out;
    },
  };
}

/** Opens a FIFO for writing once the agent has created it (as a device connector does). */
export async function openFifoWriter(fifoPath: string, ms = 30_000): Promise<fs.promises.FileHandle> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      if (fs.statSync(fifoPath).isFIFO()) return await open(fifoPath, fs.constants.O_WRONLY);
    } catch {
      // not created yet
    }
    if (Date.now() > until) throw new Error(`FIFO ${fifoPath} was not created`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Polls until `check` returns a truthy value (or throws after `ms`). */
export async function until<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 30_000,
  what = "condition",
): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end)
      throw new Error(`${what} not met within ${ms} ms${last ? `: ${(last as Error).message}` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Epoch nanoseconds of an RFC 3339 time with up to nine fraction digits. */
export function rfc3339Ns(t: string): bigint {
  const m = /^(.*?)(?:\.(\d{1,9}))?Z$/.exec(t);
  if (!m) throw new Error(`not an RFC 3339 UTC time: ${t}`);
  return BigInt(Date.parse(`${m[1]}Z`)) * 1_000_000n + BigInt((m[2] ?? "").padEnd(9, "0"));
}

/**
 * The set-up most end-to-end tests share: upstream `rt` (persist, recover, partial, flushed every 5 ms,
 * unless `upstream` says otherwise) fed by the iscp-v2-compat connector `dc` on its own FIFO.
 */
export async function streamThroughRt(s: Stack, upstream: Record<string, unknown> = {}): Promise<void> {
  await addRtUpstream(s, upstream);
  await s.put("/device-connectors/upstream", {
    id: "dc",
    format: "iscp-v2-compat",
    dest_ids: ["rt"],
    ipc: { type: "fifo", path: s.fifo("dc") },
  });
}

/** The persisted upstream "rt" (partial QoS, flushed every 5 ms). */
export async function addRtUpstream(s: Stack, upstream: Record<string, unknown> = {}): Promise<void> {
  await s.put("/upstreams", {
    id: "rt",
    persist: true,
    recover: true,
    qos: "partial",
    flush_policy: "interval",
    flush_interval: 5,
    ...upstream,
  });
}

/** A stack whose agent is connected to the cloud, then set up by `setup` (by default: streaming "dc" through "rt"). */
export async function startConnectedStack(
  opts: StackOptions = {},
  setup: (s: Stack) => Promise<void> = streamThroughRt,
): Promise<Stack> {
  const s = await startStack(opts);
  try {
    await s.connect();
    await setup(s);
    return s;
  } catch (e) {
    await s.close();
    throw e;
  }
}
