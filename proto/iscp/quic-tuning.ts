// What both iSCP QUIC ends set on @matrixai/quic: one config fragment and one per-connection step, so the client
// and the broker cannot drift apart. The pieces and their measurements are in the modules imported here.
import { QUIC_DATAGRAM_CONFIG } from "./quic-datagrams.js";
import { lightenRecvLock } from "./quic-recv-lock.js";
import { coalesceSends } from "./quic-send-batch.js";
import { MAX_RECV_UDP_PAYLOAD, STREAM_READ_CHUNK } from "./quic-udp.js";

/** Datagrams on, large packets accepted, streams read a loopback packet at a time. */
export const QUIC_SHARED_CONFIG = {
  ...QUIC_DATAGRAM_CONFIG,
  maxRecvUdpPayloadSize: MAX_RECV_UDP_PAYLOAD,
  readableChunkSize: STREAM_READ_CHUNK,
};

/** The light receive lock and coalesced drains, on a connection of either end. */
export function tuneQuicConnection(connection: object): void {
  lightenRecvLock(connection);
  coalesceSends(connection);
}
