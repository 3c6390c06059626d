// The edge agent daemon: settings store, supervisor, command API on a Unix socket. Its command line
// (`edge-agent`, options, environment) is runtime/cli/edge-agent.ts. Production paths:
// /var/run/edge-agent/agent.sock and /var/lib/edge-agent (see docs/agent-api.md).
import path from "node:path";
import type http from "node:http";
import pino, { type Logger } from "pino";
import { verifyConnection } from "./deferred/cloud-auth.js";
import { createApp } from "./api/app.js";
import type { ApiContext } from "./api/route.js";
import { collectionRoutes } from "./api/routes/collections.js";
import { singletonRoutes } from "./api/routes/singletons.js";
import { claimSocket, closeUnix, listenUnix } from "./api/unix-socket.js";
import { QueueMeasurementCatalog } from "./datapath/catalog.js";
import { DataPath } from "./datapath/datapath.js";
import { dataPathOpeners } from "./datapath/openers.js";
import { deferredUploaderOpener } from "./deferred/uploader.js";
import { DurableQueue } from "./queue/store.js";
import type { MeasurementCatalog } from "./settings/measurements.js";
import { SettingsService } from "./settings/service.js";
import { SettingsStore } from "./settings/store.js";
import { Supervisor, type Openers } from "./supervisor.js";
import { launchPolicy } from "./ipc/launch-policy.js";
import { makeDir, narrowOwnDir } from "./private-files.js";
import { AgentMetrics } from "./api/agent-metrics.js";
import { AgentError, NOT_FOUND_TITLE } from "./api/errors.js";
import { startMetricsListener, type MetricsListener } from "../lib/metrics-listener.js";

/** An answer of the metrics listener other than the metrics, in the command API's error shape. */
const problem = (status: number, detail: string, instance: string) => ({
  contentType: "application/json; charset=UTF-8",
  body: JSON.stringify(new AgentError(status, status === 404 ? NOT_FOUND_TITLE : status === 405 ? "Method not allowed" : "Internal error", detail).body(instance)),
});

/** How long stopping waits for the measurement in progress to end in the cloud (stream closes acknowledged). */
const END_ON_STOP_MS = 5000;
export const routes = [...singletonRoutes, ...collectionRoutes];

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
  if (dataDir !== path.dirname(socketPath)) {
    makeDir(dataDir, 0o700);
    narrowOwnDir(dataDir, "settings", 0o700);
  }
  const store = SettingsStore.open(dataDir, {
    onListenerError: (err) => log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, "applying a settings change failed"),
  });
  const du = store.getSingleton("deferred_upload");
  const queue = await DurableQueue.open({
    dir: path.join(path.resolve(opts.dataDir), "queue"),
    capacityMiB: du.data_storage_capacity,
    limitDataStorage: du.limit_data_storage,
    onEvict: (chunks, bytes) => log.warn({ chunks, bytes }, "storage capacity reached: oldest data deleted"),
  });
  const dataPath = new DataPath({ queue, settings: store.all(), log });
  const unwatch = store.onChange((all) => dataPath.apply(all));
  const measurements = new QueueMeasurementCatalog(dataPath);
  const ipcDir = path.resolve(opts.ipcDir ?? path.join(path.dirname(socketPath), "ipc"));
  const policy = launchPolicy({ dataDir, ipcDir }, opts.allowDirs, opts.allowEnv);
  const settings = new SettingsService(store, ipcDir, policy);
  const guard = { pidDir: path.join(dataDir, "connectors"), notice: (message: string) => log.warn(message) };
  const openers: Openers = {
    ...dataPathOpeners(dataPath, { log, quicCa: opts.quicCa, launchPolicy: policy, guard }),
    uploader: deferredUploaderOpener({
      queue,
      log,
      realtime: { busy: () => dataPath.realtimeBusy(), setHoldRealtime: (h) => dataPath.setHoldRealtime(h) },
    }),
    ...opts.openers,
  };
  const supervisor = new Supervisor(store, openers).start();
  dataPath.onPending = (bytes) => supervisor.pending(bytes);
  const shutdown = async () => {
    unwatch();
    // Before the links close: the cloud hears the measurement end now, not at the agent's next start.
    await dataPath.stopMeasuring(END_ON_STOP_MS);
    await supervisor.stop();
    await dataPath.close();
    await queue.close();
    await store.close();
  };
  const metrics = opts.metrics === false ? undefined : new AgentMetrics(dataPath);
  const api: ApiContext = {
    settings,
    states: supervisor,
    measurements,
    verifyConnection: () => verifyConnection(store.getSingleton("connection")),
    metrics: metrics && (() => metrics.exposition()),
  };
  const app = createApp(routes, api, {
    onError: (err, ctx) => log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack }, path: ctx.path }, "unhandled error"),
  });
  let server: http.Server;
  let metricsListener: MetricsListener | undefined;
  try {
    metricsListener = opts.metricsListen && metrics && (await startMetricsListener({ ...opts.metricsListen, expose: () => metrics.exposition(), refusal: problem }));
    server = await listenUnix(app.callback(), socketPath);
  } catch (e) {
    await metricsListener?.close();
    await shutdown();
    throw e;
  }
  log.info({ socket: socketPath, data: dataDir, launch_dirs: policy.dirs, ...(metricsListener ? { metrics: metricsListener.url } : {}) }, "edge agent listening");
  let closed: Promise<void> | undefined;
  return {
    socketPath,
    store,
    supervisor,
    measurements,
    dataPath,
    server,
    metricsUrl: metricsListener?.url,
    close: () =>
      (closed ??= (async () => {
        await metricsListener?.close();
        await closeUnix(server, socketPath);
        await shutdown();
      })()),
  };
}
