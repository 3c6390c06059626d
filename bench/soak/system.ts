// The system under test of one soak row: the cloud (one peer on SQLite, or two on one PostgreSQL database and one
// nats-server), the edge agent, the sample connector feeding its FIFO, and for WebSocket a TCP proxy between
// agent and cloud. Every process is kept (child-watch.ts): an exit the soak did not ask for is a crash.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { configureBenchAgent, startAgentChild } from "../../runtime/device-bench/agent-case.js";
import { startConnector, waitForFifo, type Connector } from "../../runtime/device-bench/children.js";
import { SQLITE_CACHE_KIB } from "../../cloud/database/db.js";
import { freePort, startCloudPeer, type CloudInfo, type CloudPeer } from "../../runtime/device-bench/cloud-peer.js";
import type { ApiClient } from "../../runtime/cli/client.js";
import { startNats, type NatsServer } from "../infra/nats.js";
import { startPostgres, type PgServer } from "../infra/postgres.js";
import { startTcpBalancer, type TcpBalancer } from "../infra/tcp-balancer.js";
import { Kept } from "./child-watch.js";
import type { RowSpec } from "./options.js";
import { startTls, type SoakTls } from "./tls.js";
import { makeViewerEdge, type EdgeCreds } from "./viewer.js";
import type { FillingCache } from "./watch.js";

type Agent = Awaited<ReturnType<typeof startAgentChild>>;

export interface System {
  row: RowSpec;
  dir: string;
  info: CloudInfo;
  viewer: EdgeCreds & { url: string };
  tls: SoakTls;
  /** The cloud instances' ports (TCP; QUIC's UDP on the first one's number). */
  ports: number[];
  clouds: Kept<CloudPeer>[];
  agent: Kept<Agent>;
  connector: Kept<Connector>;
  proxy?: TcpBalancer;
  pg?: PgServer;
  nats?: NatsServer;
  /** The cloud's data directory on a tmpfs of its own and its size (SQLite rows, when mounting works), for the full disk. */
  disk?: { dir: string; mib: number };
  /** The bounded caches each role fills as data comes (a SQLite cloud's page cache), for its slope's window. */
  caches: Record<string, FillingCache>;
  /** Every process's pid by role (undefined while it is down). */
  pids(): Record<string, number | undefined>;
  api(): ApiClient;
  stop(): Promise<void>;
}

/** A tmpfs of `mib` MiB at `dir` (root only); false when it cannot be mounted. */
function mountSmallDisk(dir: string, mib: number): boolean {
  fs.mkdirSync(dir, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${mib}m`, "tmpfs", dir], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function fileSize(file: string): number | undefined {
  try {
    return fs.statSync(file).size;
  } catch {
    return undefined;
  }
}

const postmasterPid = (pg: PgServer) => {
  try {
    return Number(fs.readFileSync(path.join(pg.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return undefined;
  }
};

export async function startSystem(row: RowSpec, rate: number, diskMiB: number, t0Ms: number): Promise<System> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "soak-"));
  const cleanups: Array<() => Promise<void> | void> = [];
  const sys: Partial<System> = { row, dir };
  try {
    const quic = row.transport === "quic";
    const tls = (sys.tls = startTls(path.join(dir, "tls")));
    cleanups.push(() => tls.close());
    let env: NodeJS.ProcessEnv = tls.env;
    const ports = (sys.ports = [await freePort(), await freePort()]);
    if (row.backend === "postgres") {
      const pg = (sys.pg = await startPostgres());
      cleanups.push(() => pg.stop());
      const nats = (sys.nats = await startNats());
      cleanups.push(() => nats.stop());
      // One issuer for both: a token names the URL the edge uses (the first instance's), whichever checks it.
      env = { ...env, CLOUD_DATABASE: await pg.createDatabase("soak"), CLOUD_NATS: nats.url };
    }
    const cloudDir = path.join(dir, "cloud-0");
    if (row.backend === "sqlite" && mountSmallDisk(cloudDir, diskMiB)) {
      sys.disk = { dir: cloudDir, mib: diskMiB };
      cleanups.push(() => void execFileSync("umount", ["-l", cloudDir]));
    }
    const n = row.backend === "postgres" ? 2 : 1;
    const clouds: Kept<CloudPeer>[] = (sys.clouds = []);
    for (let i = 0; i < n; i++) {
      const listen = `127.0.0.1:${ports[i]}`;
      const e = row.backend === "postgres" ? { ...env, CLOUD_PUBLIC_URL: `https://127.0.0.1:${ports[0]}` } : env;
      let first = i === 0;
      const kept = new Kept(
        `cloud-${i}`,
        async () => {
          const p = await startCloudPeer(path.join(dir, `cloud-${i}`), {
            quic: quic && i === 0,
            env: e,
            setup: first,
            listen,
          });
          first = false;
          return p;
        },
        t0Ms,
      );
      clouds.push(kept);
      cleanups.push(() => kept.stop("SIGTERM").then(() => undefined));
      const p = await kept.start();
      if (i === 0) sys.info = p.info;
    }
    const info = sys.info!;
    let agentUrl = info.url;
    if (!quic) {
      const proxy = (sys.proxy = await startTcpBalancer([ports[0]!]));
      cleanups.push(() => proxy.close());
      agentUrl = `https://127.0.0.1:${proxy.port}`;
    }
    const viewerUrl = `https://127.0.0.1:${ports[n - 1]}`;
    sys.viewer = { ...(await makeViewerEdge(info)), url: viewerUrl };

    const agent = (sys.agent = new Kept("agent", () => startAgentChild(dir), t0Ms));
    cleanups.push(() => agent.stop("SIGTERM").then(() => undefined));
    const a = await agent.start();
    const fifo = path.join(dir, "ipc", "up.fifo");
    const server = {
      url: agentUrl,
      projectUuid: info.projectUuid,
      edgeUuid: info.edgeUuid,
      clientSecret: info.edgeSecret,
    };
    await configureBenchAgent(a.api, server, row.transport, "interval", fifo);
    await waitForFifo(fifo);
    // The connector is not started again after a crash: its sequence numbers would start over.
    const connector = (sys.connector = new Kept(
      "connector",
      async () => startConnector({ fifo, rate, size: 16, count: 0 }),
      t0Ms,
      false,
    ));
    cleanups.push(() => connector.stop("SIGKILL").then(() => undefined));
    await connector.start();
    // The cloud's pages pass through its page cache as its database file grows (appended rows, their indexes).
    const dbFile = path.join(cloudDir, "cloud.db");
    const caches: Record<string, FillingCache> =
      row.backend === "sqlite"
        ? { "cloud-0": { bytes: SQLITE_CACHE_KIB * 1024, written: () => fileSize(dbFile) } }
        : {};
    return {
      ...(sys as System),
      caches,
      pids: () => {
        const out: Record<string, number | undefined> = { agent: agent.pid, connector: connector.pid };
        for (const c of clouds) out[c.role] = c.pid;
        if (sys.nats) out.nats = sys.nats.pid;
        if (sys.pg) out.postgres = postmasterPid(sys.pg);
        return out;
      },
      api: () => agent.current!.api,
      stop: async () => {
        for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
