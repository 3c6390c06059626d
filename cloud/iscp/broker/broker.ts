// Entry points: attach the iSCP broker to an HTTP server (WebSocket upgrades) and/or start the
// QUIC listener. Both share one hub, so streams relay across transports.
import type { Server } from "node:http";
import type { MessageTransport } from "../../../proto/transport/message-transport.js";
import { ServerConn } from "./conn.js";
import { IscpHub } from "./hub.js";
import { DEFAULT_LIMITS, silentLogger, type IscpBrokerOptions } from "./options.js";
import { wsUpgradeHandler, type UpgradeRefusalBody } from "../../../proto/transport/ws/server.js";
import { loadQuicServer } from "../../../proto/transport/quic/load.js";

export const ISCP_PATH = "/api/iscp/connect";

export class IscpBroker {
  readonly hub: IscpHub;
  private readonly live = new Set<ServerConn>();
  private readonly closers: (() => void | Promise<void>)[] = [];
  private closed = false;

  constructor(readonly options: IscpBrokerOptions) {
    this.hub = new IscpHub({ ...DEFAULT_LIMITS, ...options.limits }, options, options.logger ?? silentLogger);
  }

  /** Runs the iSCP protocol over an accepted transport. */
  accept(transport: MessageTransport, remote: string): ServerConn {
    const conn = new ServerConn(transport, this.hub, this.options.authenticate, remote);
    this.live.add(conn);
    transport.onClose(() => this.live.delete(conn));
    conn.start();
    return conn;
  }

  /** Connections whose transport is up (tests use it to drop sockets). */
  connections(): ServerConn[] {
    return [...this.live];
  }

  /** False once close() began: the broker takes no new connections (readiness probe). */
  get accepting(): boolean {
    return !this.closed;
  }

  stats() {
    return this.hub.stats();
  }

  onClose(fn: () => void | Promise<void>): void {
    this.closers.push(fn);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.live) c.transport.terminate();
    this.live.clear();
    for (const fn of this.closers.splice(0)) await fn();
    this.hub.close();
  }
}

/**
 * Handles `GET /api/iscp/connect` upgrades on `server`. Every other upgrade request is answered 404
 * (written by `refusalBody`) and its socket freed: the server has no other WebSocket endpoint.
 */
export function attachIscpBroker(
  server: Server,
  opts: IscpBrokerOptions & { path?: string; broker?: IscpBroker; refusalBody?: UpgradeRefusalBody },
): IscpBroker {
  const broker = opts.broker ?? new IscpBroker(opts);
  const L = broker.hub.limits;
  const ws = wsUpgradeHandler({
    path: opts.path ?? ISCP_PATH,
    // Twice the limit, so an oversized message still arrives and gets a TOO_LARGE_MESSAGE_SIZE Disconnect.
    maxPayloadBytes: L.maxIncomingMessageBytes * 2,
    lowWaterBytes: L.transportHighWaterBytes >> 1,
    onTransport: (t, remote) => broker.accept(t, remote),
    // Only speed is lost (ws assembles large messages itself), but a pinned ws version should not drift unnoticed.
    onPoolingUnavailable: () =>
      broker.hub.logger.warn({}, "ws internals moved: large iSCP messages are no longer received into reused buffers"),
    refusalBody: opts.refusalBody,
  });
  const listener = ws.handle;
  server.on("upgrade", listener);
  broker.onClose(() => {
    server.off("upgrade", listener);
    ws.close();
  });
  return broker;
}

export interface IscpQuicOptions extends IscpBrokerOptions {
  /** Share streams with a WebSocket broker; a new broker is created otherwise. */
  broker?: IscpBroker;
  host?: string;
  port?: number;
  /** PEM TLS key and certificate. */
  key: string;
  cert: string;
  maxIdleTimeoutMs?: number;
}

/**
 * Listens for iSCP over QUIC; every negotiated connection runs the broker's protocol. The QUIC library is
 * loaded here, on demand (QuicUnavailableError where it cannot load).
 */
export async function startIscpQuic(opts: IscpQuicOptions): Promise<{
  port: number;
  broker: IscpBroker;
  setCertificate(pem: { key: string; cert: string }): void;
  close(): Promise<void>;
}> {
  const broker = opts.broker ?? new IscpBroker(opts);
  const L = broker.hub.limits;
  const log = broker.hub.logger;
  const { listenQuic } = await loadQuicServer();
  const quic = await listenQuic({
    host: opts.host,
    port: opts.port,
    key: opts.key,
    cert: opts.cert,
    maxIdleTimeoutMs: opts.maxIdleTimeoutMs,
    // Twice the limit, as on WebSocket: an oversized message still arrives and gets its Disconnect.
    maxStreamMessageBytes: L.maxIncomingMessageBytes * 2,
    maxIncomingMessageBytes: L.maxIncomingMessageBytes,
    lowWaterBytes: L.transportHighWaterBytes >> 1,
    onTransport: (t, remote) => broker.accept(t, remote),
    onRefused: (remote, why) => log.info({ remote, why }, "iscp quic connection refused"),
    onError: (err) => log.warn({ err: String(err) }, "iscp quic server error"),
  });
  broker.onClose(quic.close);
  return { port: quic.port, broker, setCertificate: quic.setCertificate, close: quic.close };
}
