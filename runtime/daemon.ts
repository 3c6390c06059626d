// The edge agent daemon: settings store, supervisor, command API on a Unix socket. Its command line
// (`edge-agent`, options, environment) is runtime/cli/edge-agent.ts. Production paths:
// /var/run/edge-agent/agent.sock and /var/lib/edge-agent (see docs/agent-api.md). The socket listens
// before the rest of the agent (runtime/agent-core.ts) is loaded, so it answers soon after start.
import path from "node:path";
import type http from "node:http";
import pino, { type Logger } from "pino";
import type { AgentCore } from "./agent-core.js";
import type { MeasurementCatalog } from "./settings/measurements.js";
import type { SettingsStore } from "./settings/store.js";
import type { Supervisor, Openers } from "./supervisor.js";
import type { DataPath } from "./datapath/datapath.js";
import { StartGate } from "./api/start-gate.js";
import { claimSocket, closeUnix, listenUnix } from "./api/unix-socket.js";
import { lockDataDir } from "./data-dir-lock.js";
import { makeDir } from "./private-files.js";

export interface AgentOptions {
  socketPath: string;
  dataDir: string;
  /** Where FIFOs go when an IPC channel is created without `ipc` (default: next to the socket). */
  ipcDir?: string;
  /**
   * What the machines supervise. Defaults: the data path (runtime/datapath): real iSCP connections for
   * streams, real FIFOs and connectors for IPC channels, the LMDB queue between them.
   */
  openers?: Openers;
  log?: Logger;
  /**
   * CA certificate (PEM) that signed the cloud's QUIC certificate. Without it the agent does not verify
   * the cloud's QUIC certificate (the token still authenticates the edge; see docs/decisions.md).
   */
  quicCa?: string;
  /**
   * Directories, beyond the agent's own data and IPC directories and intdash's FIFO folders, that device
   * connectors' programs and FIFOs may come from (ipc/launch-policy.ts): the administrator's choice.
   */
  allowDirs?: readonly string[];
  /** Loader and runtime injection variables (LD_PRELOAD, NODE_OPTIONS, ...) allowed in `launch.environment`. */
  allowEnv?: readonly string[];
  /** Also serve GET /metrics on this address, to anyone who reaches it (the socket serves GET /api/v1/metrics). */
  metricsListen?: { host: string; port: number };
  /** false: no Prometheus registry at all (AGENT_METRICS=off), so a benchmark can tell what metrics cost. */
  metrics?: boolean;
}

export interface RunningAgent {
  socketPath: string;
  store: SettingsStore;
  supervisor: Supervisor;
  measurements: MeasurementCatalog;
  dataPath: DataPath;
  server: http.Server;
  /** `http://host:port/metrics` of the --metrics-listen listener, when configured. */
  metricsUrl?: string;
  close(): Promise<void>;
}

export async function startAgent(opts: AgentOptions): Promise<RunningAgent> {
  const log = opts.log ?? pino({ level: "silent" });
  const socketPath = path.resolve(opts.socketPath);
  // Before anything else: a live agent on this socket is refused before its data or connectors are touched.
  await claimSocket(socketPath);
  const dataDir = path.resolve(opts.dataDir);
  // Private unless it also holds the socket, whose folder the agent's group must be able to enter.
  if (dataDir !== path.dirname(socketPath)) makeDir(dataDir, 0o700);
  // Then the data directory: a second agent on it is refused before it opens the queue or the settings.
  const dataLock = await lockDataDir(dataDir);
  // The socket listens first (only this file's small imports are loaded by now); requests that need the
  // rest wait for it in the gate (api/start-gate.ts).
  const gate = new StartGate();
  const server = await listenUnix(gate.handler, socketPath);
  log.debug({ socket: socketPath }, "socket listening; loading the agent");
  let core: AgentCore;
  try {
    const { openAgentCore } = await loadCore();
    core = await openAgentCore(opts, { socketPath, dataDir, log });
  } catch (e) {
    gate.fail();
    await closeUnix(server, socketPath);
    await dataLock.release();
    throw e;
  }
  gate.open(core.handler);
  log.info(
    {
      socket: socketPath,
      data: dataDir,
      launch_dirs: core.launchDirs,
      ...(core.metricsUrl ? { metrics: core.metricsUrl } : {}),
    },
    "edge agent listening",
  );
  let closed: Promise<void> | undefined;
  return {
    socketPath,
    store: core.store,
    supervisor: core.supervisor,
    measurements: core.measurements,
    dataPath: core.dataPath,
    server,
    metricsUrl: core.metricsUrl,
    close: () =>
      (closed ??= (async () => {
        await closeUnix(server, socketPath);
        await core.close();
        await dataLock.release();
      })()),
  };
}

/**
 * Node 22+ loads an import()'s whole module graph without turning the event loop: loaded in one go, the core
 * would keep the listening socket silent until the end. Its largest packages are loaded first, one at a time,
 * with the loop turning between, so the gate answers meanwhile (Node 20's loader turns it by itself). Schema, not
 * effect's index: the index would load (and the bundle keep) all of effect, most of which the agent never uses.
 */
async function loadCore(): Promise<typeof import("./agent-core.js")> {
  for (const load of [
    () => import("effect/Schema"),
    () => import("lmdb"),
    () => import("xstate"),
    () => import("ws"),
    () => import("protobufjs"),
  ]) {
    await load();
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return import("./agent-core.js");
}
