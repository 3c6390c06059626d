// What both iSCP QUIC ends set on @matrixai/quic: one config fragment and one per-connection step, so the client
// and the broker cannot drift apart. The pieces and their measurements are in the modules imported here.
import Logger, { LogLevel } from "@matrixai/logger";
import { QUIC_DATAGRAM_CONFIG } from "./datagrams.js";
import { sendPacketsDirectly } from "./patches/direct-send.js";
import { lightenRecvLock } from "./patches/recv-lock.js";
import { routeShortHeaders } from "./patches/socket-route.js";
import { lightenStreamScan } from "./patches/stream-scan.js";
import { coalesceSends } from "./patches/send-batch.js";
import { MAX_RECV_UDP_PAYLOAD, STREAM_READ_CHUNK } from "./patches/udp.js";

/** Datagrams on, large packets accepted, streams read a loopback packet at a time. */
export const QUIC_SHARED_CONFIG = {
  ...QUIC_DATAGRAM_CONFIG,
  maxRecvUdpPayloadSize: MAX_RECV_UDP_PAYLOAD,
  readableChunkSize: STREAM_READ_CHUNK,
};

/**
 * The light receive lock, one stream walk per turn, coalesced drains, packets sent straight to `owner`'s (client or
 * server) UDP socket, and received ones routed to their connection without the library's header parsing.
 */
export function tuneQuicConnection(connection: object, owner: object): void {
  lightenRecvLock(connection);
  // Before coalesceSends: the scan wraps the library's own drain, to walk the streams first.
  lightenStreamScan(connection);
  coalesceSends(connection);
  sendPacketsDirectly(connection, owner);
  routeShortHeaders(owner);
}

/** @matrixai/quic logs every stream at INFO by default. */
export function quietLogger(): Logger {
  return new Logger("iscp-quic", LogLevel.ERROR);
}
