// What both iSCP QUIC ends set on @matrixai/quic's configuration and logger, so the client and the broker cannot
// drift apart. The patches of its internals are installed by patches/index.ts.
import Logger, { LogLevel } from "@matrixai/logger";
import { QUIC_DATAGRAM_CONFIG } from "./datagrams.js";
import { MAX_RECV_UDP_PAYLOAD, STREAM_READ_CHUNK } from "./patches/index.js";

/** Datagrams on, large packets accepted, streams read a loopback packet at a time. */
export const QUIC_SHARED_CONFIG = {
  ...QUIC_DATAGRAM_CONFIG,
  maxRecvUdpPayloadSize: MAX_RECV_UDP_PAYLOAD,
  readableChunkSize: STREAM_READ_CHUNK,
};

/** @matrixai/quic logs every stream at INFO by default. */
export function quietLogger(): Logger {
  return new Logger("iscp-quic", LogLevel.ERROR);
}
