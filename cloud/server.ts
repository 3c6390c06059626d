// Builds and runs a cloud peer. The whole wiring, in the order it runs:
//  1. storage: the data directory, the database, every module's migrations (cloud/modules.ts order);
//  2. Services: the core members, then each module's `provide` (cloud/modules.ts, provideServices);
//  3. extension points, each in module order: `authenticators`, `clientResolvers` (oauth), `on` (domain events);
//  4. HTTP: routes (+ the OpenAPI document), the error renderer (areas' `errorRenderers`, then
//     cloud/http/error-reply.ts), the pre-routing `fastPaths` in front of the Koa application, `attach`;
//  5. listen; on close: `serverClosing`, in-flight requests, close hooks (`svc.onClose`, reversed), database.
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type pino from "pino";
import type { CloudConfig } from "./config.js";
import { createApp } from "./http/app.js";
import { buildOpenApi } from "./http/openapi.js";
import { defineRoute, type AnyRoute } from "./http/route.js";
import { createLogger } from "./logger.js";
import { CloudMetrics, storageBytes, UNMATCHED } from "./metrics.js";
import { startMetricsListener } from "../lib/metrics-listener.js";
import { errorBodyJson, errorReply } from "./http/error-reply.js";
import { preRouting } from "./http/pre-routing.js";
import { isStorageFull } from "./database/db.js";
import { observeRequests } from "./http/request-observer.js";
import { accessLog } from "./http/access-log.js";
import { modules, provideServices } from "./modules.js";
import type { CoreServices, Services } from "./services.js";
import { DomainEvents } from "./events.js";
import { openDatabase } from "./database/open.js";
import { migrate } from "./database/migrate.js";
import { StorageRoom } from "./database/room.js";
import { readTlsPair, reloadTls, TLS_NAMES } from "./http/tls-files.js";
import { answerPlainHttp, withHsts } from "./http/tls-front.js";
import { limitConnections, serverTimeouts } from "./http/connection-limits.js";

export const VERSION = "0.1.0";

export interface CloudPeer {
  url: string;
  server: http.Server;
  svc: Services;
  routes: AnyRoute[];
  /** The Koa application's listener, behind the pre-routing fast paths (tests serve it alone). */
  application: http.RequestListener;
  /** `http://host:port/metrics` of the --metrics-listen listener, when configured. */
  metricsUrl?: string;
  /** Reads --tls-cert / --tls-key again for new connections (SIGHUP); false when they failed (the old pair stays). */
  reloadTls(): boolean;
  close(): Promise<void>;
}

/** Opens storage, runs every module's migrations and provide, and wires the extension points, without listening. */
export async function openServices(
  config: CloudConfig,
  opts: { logDestination?: pino.DestinationStream } = {},
): Promise<{ svc: Services }> {
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const log = createLogger(config.logLevel, opts.logDestination, config.logFormat);
  const db = await openDatabase(config);
  await migrate(
    db,
    modules.flatMap((m) => m.migrations ?? []),
  );
  const core: CoreServices = {
    config,
    log,
    db,
    storageRoom: new StorageRoom(config.dataDir),
    metrics: new CloudMetrics(),
    authenticators: [],
    events: new DomainEvents(log),
    onClose: [],
    onTlsReload: [],
  };
  let svc: Services;
  try {
    svc = await provideServices(core);
  } catch (e) {
    // A module that cannot start (say, NATS unreachable) leaves nothing open behind it.
    for (const fn of [...core.onClose].reverse()) await Promise.resolve(fn()).catch(() => undefined);
    await db.close();
    throw e;
  }
  for (const m of modules) svc.authenticators.push(...(m.authenticators?.(svc) ?? []));
  for (const m of modules) svc.oauth.clientResolvers.push(...(m.clientResolvers?.(svc) ?? []));
  for (const m of modules) {
    for (const [name, listener] of Object.entries(m.on ?? {}))
      svc.events.on(name as "userDeleted", (payload) => listener(svc, payload));
  }
  return { svc };
}

const tlsOptions = ({ cert, key }: { cert: string; key: string }): https.ServerOptions => ({ cert, key });

export async function startCloudPeer(
  config: CloudConfig,
  opts: { logDestination?: pino.DestinationStream } = {},
): Promise<CloudPeer> {
  const { svc } = await openServices(config, opts);
  const routes: AnyRoute[] = modules.flatMap((m) => m.routes ?? []);
  const openapi = defineRoute({
    operationId: "getOpenApiDocument",
    method: "GET",
    path: "/openapi.json",
    tag: "meta",
    auth: "none",
    success: 200,
    handler: () => buildOpenApi(routes, { title: "cloud-peer", version: VERSION, serverUrl: config.publicUrl }),
  });
  routes.push(openapi);
  const areaRenderers = modules.flatMap((m) => m.errorRenderers ?? []);
  const renderError = (err: unknown, path: string) => {
    // The readiness probe reports a full disk until a write succeeds again.
    if (isStorageFull(err)) svc.storageRoom.noteFull();
    return errorReply(err, svc.log, path, areaRenderers);
  };
  const app = createApp(routes, svc, renderError);
  const application = app.callback();
  const logRequest = accessLog(svc.log);
  const listener = observeRequests(
    preRouting(
      modules.flatMap((m) => m.fastPaths ?? []),
      application,
      { svc, renderError },
    ),
    (r) => {
      svc.metrics.request(r.method, r.route ?? UNMATCHED, r.status, r.seconds);
      logRequest(r);
    },
  );
  // HTTPS and WSS on the one listen address when a certificate is given (checked again here: a file may have
  // changed since the settings were read).
  const tls = config.tlsCert && config.tlsKey ? { cert: config.tlsCert, key: config.tlsKey } : undefined;
  const timeouts = serverTimeouts(config);
  const server: http.Server = tls
    ? https.createServer({ ...timeouts, ...tlsOptions(readTlsPair(tls, TLS_NAMES)) }, withHsts(listener))
    : http.createServer(timeouts, listener);
  if (tls) answerPlainHttp(server as https.Server, timeouts.handshakeTimeout);
  server.keepAliveTimeout = 5_000;
  limitConnections(server, config, svc.log);
  for (const m of modules) await m.attach?.(server, svc);
  const storage = async () => {
    const files = await storageBytes(config.dataDir);
    return {
      ...files,
      databaseBytes: (await svc.db.databaseBytes?.()) ?? files.databaseBytes,
      freeBytes: (await svc.storageRoom.check()).freeBytes,
    };
  };
  svc.metrics.setSources({ storage });
  const metricsListener = config.metricsListen
    ? await startMetricsListener({
        ...config.metricsListen,
        expose: () => svc.metrics.exposition(),
        refusal: (status, title) => errorBodyJson(status, title),
      })
    : undefined;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.listenPort, config.listenHost, () => resolve());
  }).catch(async (e: unknown) => {
    await metricsListener?.close();
    throw e;
  });
  const addr = server.address() as { port: number; address: string };
  const host = addr.address.includes(":") ? `[${addr.address}]` : addr.address;
  const url = `${tls ? "https" : "http"}://${host}:${addr.port}`;
  if (config.listenPort === 0 && svc.config.publicUrl.endsWith(":0")) svc.config.publicUrl = url;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Stop accepting and let in-flight requests finish; upgraded connections (iSCP over WebSocket)
      // end only when their module closes them, so modules close after a grace period, then the DB.
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const m of modules) m.serverClosing?.(svc);
      server.closeIdleConnections();
      // A request still running after the grace period (say, a client that never finishes its
      // body) is cut, so a stuck client cannot hold the shutdown for the 5 min of requestTimeout.
      const cut = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
      await Promise.race([stopped, new Promise((r) => setTimeout(r, Math.min(1000, config.shutdownGraceMs)).unref())]);
      for (const fn of [...svc.onClose].reverse()) await fn();
      await stopped;
      clearTimeout(cut);
      await metricsListener?.close();
      await svc.db.close();
    })());
  const reload = () => {
    const pair = tls && reloadTls(server as https.Server, tls, svc.log);
    if (pair) for (const fn of svc.onTlsReload) fn(pair);
    return Boolean(pair);
  };
  return { url, server, svc, routes, application, metricsUrl: metricsListener?.url, reloadTls: reload, close };
}
