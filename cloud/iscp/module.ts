// Plugs the iSCP broker (cloud/iscp, protocol only) into the cloud peer: WebSocket upgrades on
// /api/iscp/connect, QUIC when --iscp-quic-listen is set, authentication by JWT or ticket, and
// persist=true upstreams stored as measurements.
import fs from "node:fs";
import path from "node:path";
import * as Schema from "effect/Schema";
import { attachIscpBroker, IscpBroker, startIscpQuic } from "./broker/broker.js";
import { measurementHooks } from "../measurements/module.js";
import { errorBodyJson } from "../http/error-reply.js";
import { Invalid } from "../errors.js";
import { defineRoute } from "../http/route.js";
import { edgeConnectionsRoute } from "./routes/edge-connections.js";
import type { ProvidingModule } from "../module-contract.js";
import type { Services } from "../services.js";
import { brokerAuthenticator } from "./service/authenticate.js";
import { TicketStore } from "./service/tickets.js";
import { attachClusterRelay } from "./service/cluster-relay.js";
import { shareConnections, type ClusterConnections } from "./service/cluster-connections.js";
import { ensureQuicCertificate } from "./service/quic-cert.js";
import { SharedUpstreamStates } from "./service/upstream-states.js";
import { iscpMigrations } from "./repo/migrations.js";
import { loadQuicServer, QuicUnavailableError } from "../../proto/transport/quic/load.js";

declare module "../services.js" {
  interface Services {
    iscp: {
      broker: IscpBroker;
      tickets: TicketStore;
      connections: ClusterConnections;
      upstreamStates: SharedUpstreamStates;
      quicPort?: number;
    };
  }
}

const tickets = new TicketStore();

const issueTicket = defineRoute({
  operationId: "issueISCPTicket",
  method: "POST",
  path: "/iscp/tickets",
  tag: "broker_ISCP",
  summary: "Issue a one-time ticket usable as the iSCP access token",
  success: 201,
  response: Schema.Struct({ ticket: Schema.String, expired_at: Schema.String, created_at: Schema.String }),
  handler: ({ principal }) => tickets.issue(principal!),
});

// The WebSocket upgrade itself is taken by the broker's `upgrade` listener before routing; this
// route documents it (the intdash REST API's connectISCPV2) and answers a plain GET with 400 instead of 404.
const connect = defineRoute({
  operationId: "connectISCPV2",
  method: "GET",
  path: "/iscp/connect",
  tag: "broker_ISCP",
  summary: "iSCP v2 over WebSocket (`enc=proto|json`); the access token travels in ConnectRequest",
  auth: "none",
  success: 101,
  errors: [400],
  handler: () => {
    throw new Invalid("GET /api/iscp/connect needs a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)");
  },
});

function parseListen(listen: string): { host: string; port: number } {
  const idx = listen.lastIndexOf(":");
  return {
    host: idx > 0 ? listen.slice(0, idx).replace(/^\[|\]$/g, "") : "127.0.0.1",
    port: Number(listen.slice(idx + 1)),
  };
}

type Needs = Pick<
  Services,
  | "config"
  | "log"
  | "db"
  | "metrics"
  | "storageRoom"
  | "onClose"
  | "cluster"
  | "accounts"
  | "oauth"
  | "org"
  | "measurements"
>;

export const brokerModule: ProvidingModule<Needs, Pick<Services, "iscp">> = {
  name: "broker",
  migrations: iscpMigrations,
  routes: [issueTicket, connect, edgeConnectionsRoute],
  provide(svc) {
    const log = svc.log.child({ area: "iscp" });
    const upstreamStates = new SharedUpstreamStates(svc.db, svc.cluster.bus.instanceId, (msg, err) =>
      log.warn({ err: String(err) }, msg),
    );
    const broker = new IscpBroker({
      authenticate: brokerAuthenticator(svc, tickets),
      logger: log,
      limits: svc.config.iscpLimits,
      upstreamStates,
      ...measurementHooks(svc.measurements, () => svc.storageRoom.noteFull()),
    });
    const connections = shareConnections(broker, svc.cluster.bus);
    svc.onClose.push(() => connections.stop());
    svc.metrics.setSources({
      iscp: () => ({
        connections: broker.connections().map((c) => ({ transport: c.transport.kind })),
        upstreams: broker.hub.upstreams.size,
        downstreams: broker.hub.downstreams.size,
      }),
    });
    svc.onClose.push(() => broker.close());
    return { iscp: { broker, tickets, connections, upstreamStates } };
  },
  async attach(server, svc) {
    const { broker, upstreamStates } = svc.iscp;
    upstreamStates.start();
    svc.onClose.push(() => upstreamStates.stop());
    attachIscpBroker(server, { ...broker.options, broker, refusalBody: errorBodyJson });
    // With --nats, streams relay across the peers (after the broker in onClose, so it stops first).
    const stopRelay = attachClusterRelay(broker.hub, svc.cluster.bus, (msg, err) =>
      svc.log.warn({ err: String(err) }, msg),
    );
    svc.onClose.push(stopRelay);
    svc.onClose.push(tickets.share(svc.cluster.bus));
    if (svc.config.iscpQuicListen) {
      const { host, port } = parseListen(svc.config.iscpQuicListen);
      // Before anything is made for QUIC: a platform without the QUIC library is a startup error that says so.
      await loadQuicServer().catch((e: unknown) => {
        throw e instanceof QuicUnavailableError
          ? new Error(
              `--iscp-quic-listen (CLOUD_ISCP_QUIC_LISTEN): ${e.message}; leave it unset to serve iSCP over WebSocket only`,
            )
          : e;
      });
      // QUIC's own pair if given, else the HTTPS one (loadConfig checked both pairs), else a self-signed one.
      const { iscpQuicCert, iscpQuicKey, tlsCert, tlsKey } = svc.config;
      const tls = ensureQuicCertificate(
        path.join(svc.config.dataDir, "quic"),
        iscpQuicCert ? { cert: iscpQuicCert, key: iscpQuicKey } : { cert: tlsCert, key: tlsKey },
      );
      const quic = await startIscpQuic({
        ...broker.options,
        broker,
        host,
        port,
        key: fs.readFileSync(tls.key, "utf8"),
        cert: fs.readFileSync(tls.cert, "utf8"),
      });
      svc.iscp.quicPort = quic.port;
      // Serving the HTTPS pair: a renewal reloaded on SIGHUP applies to QUIC's new connections too.
      if (!iscpQuicCert && tlsCert) svc.onTlsReload.push((pair) => quic.setCertificate(pair));
      svc.onClose.push(() => quic.close());
      svc.log.info({ host, port: quic.port }, "iSCP over QUIC listening");
    }
  },
};
