// What the daemon (runtime/daemon.ts) loads once its socket listens: the settings and queue LMDB
// environments, the data path, the lifecycle machines, the command API's Koa app and the metrics
// listener. Loading these takes most of the agent's start, so the socket answers before they are here.
import path from "node:path";
import type http from "node:http";
import type { Logger } from "pino";
import { verifyConnection } from "./deferred/cloud-auth.js";
import { createApp } from "./api/app.js";
import type { ApiContext } from "./api/route.js";
import { collectionRoutes } from "./api/routes/collections.js";
import { singletonRoutes } from "./api/routes/singletons.js";
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
import { narrowOwnDir } from "./private-files.js";
import { AgentMetrics } from "./api/agent-metrics.js";
import { AgentError, NOT_FOUND_TITLE } from "./api/agent-errors.js";
import { startMetricsListener, type MetricsListener } from "../lib/metrics-listener.js";
import type { AgentOptions } from "./daemon.js";

/** An answer of the metrics listener other than the metrics, in the command API's error shape. */
const problem = (status: number, detail: string, instance: string) => ({
  contentType: "application/json; charset=UTF-8",
  body: JSON.stringify(
    new AgentError(
      status,
      status === 404 ? NOT_FOUND_TITLE : status === 405 ? "Method not allowed" : "Internal error",
      detail,
    ).body(instance),
  ),
});

/** How long stopping waits for the measurement in progress to end in the cloud (stream closes acknowledged). */
const END_ON_STOP_MS = 5000;
export const routes = [...singletonRoutes, ...collectionRoutes];

export interface AgentCore {
  store: SettingsStore;
  supervisor: Supervisor;
  measurements: MeasurementCatalog;
  dataPath: DataPath;
  /** The command API, served on the socket once the core is open. */
  handler: http.RequestListener;
  launchDirs: readonly string[];
  metricsUrl?: string;
  close(): Promise<void>;
}

export async function openAgentCore(
  opts: AgentOptions,
  at: { socketPath: string; dataDir: string; log: Logger },
): Promise<AgentCore> {
  const { socketPath, dataDir, log } = at;
  if (dataDir !== path.dirname(socketPath)) narrowOwnDir(dataDir, "settings", 0o700);
  const store = SettingsStore.open(dataDir, {
    onListenerError: (err) =>
      log.error(
        { err: { message: (err as Error)?.message, stack: (err as Error)?.stack } },
        "applying a settings change failed",
      ),
  });
  const du = store.getSingleton("deferred_upload");
  const queue = await DurableQueue.open({
    dir: path.join(dataDir, "queue"),
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
  const guard = {
    pidDir: path.join(dataDir, "connectors"),
    notice: (message: string) => log.warn(message),
    allowEnv: policy.allowEnv,
  };
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
  const metrics =
    opts.metrics === false
      ? undefined
      : new AgentMetrics(dataPath, { store, states: supervisor, linkEvents: supervisor.linkEvents });
  const api: ApiContext = {
    settings,
    states: supervisor,
    measurements,
    verifyConnection: () => verifyConnection(store.getSingleton("connection")),
    metrics: metrics && (() => metrics.exposition()),
  };
  const app = createApp(routes, api, {
    onError: (err, ctx) =>
      log.error(
        { err: { message: (err as Error)?.message, stack: (err as Error)?.stack }, path: ctx.path },
        "unhandled error",
      ),
  });
  let metricsListener: MetricsListener | undefined;
  try {
    metricsListener =
      opts.metricsListen &&
      metrics &&
      (await startMetricsListener({ ...opts.metricsListen, expose: () => metrics.exposition(), refusal: problem }));
  } catch (e) {
    await shutdown();
    throw e;
  }
  return {
    store,
    supervisor,
    measurements,
    dataPath,
    handler: app.callback(),
    launchDirs: policy.dirs,
    metricsUrl: metricsListener?.url,
    close: async () => {
      await metricsListener?.close();
      await shutdown();
    },
  };
}
