// The edge agent daemon: settings store, supervisor, command API on a Unix socket.
//   npx edge-agent [--socket PATH] [--data DIR] [--log-level LEVEL]
//   npx edge-agent bench [...]   (runtime/bench/cli.ts)
// Environment: AGENT_SOCKET, AGENT_DATA, AGENT_LOG_LEVEL. Production paths: /var/run/edge-agent/agent.sock
// and /var/lib/edge-agent (see docs/agent-api.md).
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type http from "node:http";
import pino, { type Logger } from "pino";
import { verifyConnection } from "../machines/cloud-auth.js";
import { createApp } from "./api/app.js";
import type { ApiContext } from "./api/route.js";
import { collectionRoutes } from "./api/routes/collections.js";
import { singletonRoutes } from "./api/routes/singletons.js";
import { SocketInUseError, claimSocket, closeUnix, listenUnix } from "./api/unix-socket.js";
import { QueueMeasurementCatalog } from "./datapath/catalog.js";
import { DataPath } from "./datapath/datapath.js";
import { dataPathOpeners } from "./datapath/openers.js";
import { deferredUploaderOpener } from "./deferred/uploader.js";
import { DurableQueue } from "./queue/store.js";
import type { MeasurementCatalog } from "./settings/measurements.js";
import { SettingsService } from "./settings/service.js";
import { SettingsStore } from "./settings/store.js";
import { Supervisor, type Openers } from "./supervisor.js";

/** How long stopping waits for the measurement in progress to end in the cloud (stream closes acknowledged). */
const END_ON_STOP_MS = 5000;

export const DEFAULT_SOCKET = "./data/agent/agent.sock";
export const DEFAULT_DATA = "./data/agent";
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
}

export interface RunningAgent {
  socketPath: string;
  store: SettingsStore;
  supervisor: Supervisor;
  measurements: MeasurementCatalog;
  dataPath: DataPath;
  server: http.Server;
  close(): Promise<void>;
}

export async function startAgent(opts: AgentOptions): Promise<RunningAgent> {
  const log = opts.log ?? pino({ level: "silent" });
  const socketPath = path.resolve(opts.socketPath);
  // Before anything else: a live agent on this socket is refused before its data or connectors are touched.
  await claimSocket(socketPath);
  const store = SettingsStore.open(path.resolve(opts.dataDir), {
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
  const settings = new SettingsService(store, path.resolve(opts.ipcDir ?? path.join(path.dirname(socketPath), "ipc")));
  const openers: Openers = {
    ...dataPathOpeners(dataPath, { log, quicCa: opts.quicCa }),
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
  const api: ApiContext = {
    settings,
    states: supervisor,
    measurements,
    verifyConnection: () => verifyConnection(store.getSingleton("connection")),
  };
  const app = createApp(routes, api, {
    onError: (err, ctx) => log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack }, path: ctx.path }, "unhandled error"),
  });
  let server: http.Server;
  try {
    server = await listenUnix(app.callback(), socketPath);
  } catch (e) {
    await shutdown();
    throw e;
  }
  log.info({ socket: socketPath, data: path.resolve(opts.dataDir) }, "edge agent listening");
  let closed: Promise<void> | undefined;
  return {
    socketPath,
    store,
    supervisor,
    measurements,
    dataPath,
    server,
    close: () =>
      (closed ??= (async () => {
        await closeUnix(server, socketPath);
        await shutdown();
      })()),
  };
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** The daemon's flags; a usage error is a one-line message and exit code 2, never a stack trace. */
function parseOptions(argv: string[]) {
  const usageError = (message: string) => {
    process.stderr.write(`edge-agent: ${message}\nusage: edge-agent [--socket PATH] [--data DIR] [--log-level info] (edge-agent --help)\n`);
    process.exitCode = 2;
    return undefined;
  };
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        socket: { type: "string", short: "s" },
        data: { type: "string", short: "d" },
        "log-level": { type: "string" },
        "quic-ca": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (e) {
    return usageError((e as Error).message);
  }
  const level = values["log-level"] ?? process.env.AGENT_LOG_LEVEL;
  if (level !== undefined && !LOG_LEVELS.includes(level)) return usageError(`log level "${level}" is not one of ${LOG_LEVELS.join(", ")}`);
  return values;
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  if (argv[0] === "bench") {
    // Loaded only for this subcommand: the daemon does not pull in the benchmark's code.
    const { benchMain } = await import("./bench/cli.js");
    process.exitCode = await benchMain(argv.slice(1));
    return;
  }
  const values = parseOptions(argv);
  if (!values) return;
  if (values.help) {
    process.stdout.write(
      "usage: edge-agent [--socket PATH] [--data DIR] [--log-level info]\n" +
        `  --socket  command API socket (env AGENT_SOCKET, default ${DEFAULT_SOCKET}; production /var/run/edge-agent/agent.sock)\n` +
        `  --data    settings and data directory (env AGENT_DATA, default ${DEFAULT_DATA}; production /var/lib/edge-agent)\n` +
        "  --quic-ca PEM file of the CA that signed the cloud's QUIC certificate (env AGENT_QUIC_CA)\n" +
        "       edge-agent bench [--server URL] [--duration S] [--payload BYTES] [--rate N]\n" +
        "  measures this device: points/s, MB/s, latency, CPU and memory end to end (edge-agent bench --help)\n",
    );
    return;
  }
  const log = pino({ level: values["log-level"] ?? process.env.AGENT_LOG_LEVEL ?? "info", base: { svc: "edge-agent" } });
  let agent: RunningAgent;
  try {
    const caPath = values["quic-ca"] ?? process.env.AGENT_QUIC_CA;
    const quicCa = caPath ? fs.readFileSync(caPath, "utf8") : undefined;
    agent = await startAgent({
      quicCa,
      socketPath: values.socket ?? process.env.AGENT_SOCKET ?? DEFAULT_SOCKET,
      dataDir: values.data ?? process.env.AGENT_DATA ?? DEFAULT_DATA,
      log,
    });
  } catch (e) {
    const msg = e instanceof SocketInUseError ? e.message : `cannot start: ${(e as Error).message}`;
    process.stderr.write(`edge-agent: ${msg}\n`);
    process.exitCode = 1;
    return;
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping");
    agent.close().then(
      () => process.exit(0),
      (e) => {
        log.error({ err: (e as Error).message }, "error while stopping");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}
