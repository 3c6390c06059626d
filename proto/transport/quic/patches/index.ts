// Every patch of @matrixai/quic's internals, installed in one place. Each reaches into the library's private
// members and swaps nothing where they are not as expected, so a version bump cannot break a connection, only
// lose speed: installQuicPatches says which patches took, and the library's version is pinned in package.json
// (tests/proto/transport/quic/patches/version.test.ts names the patches to re-check when it changes).
import { sendPacketsDirectly } from "./direct-send.js";
import { lightenRecvLock } from "./recv-lock.js";
import { coalesceSends } from "./send-batch.js";
import { routeShortHeaders } from "./socket-route.js";
import { lightenStreamScan } from "./stream-scan.js";
import { widenUdpBuffers } from "./udp.js";

export { flushSends } from "./send-batch.js";
export { MAX_RECV_UDP_PAYLOAD, STREAM_READ_CHUNK, udpPayloadConfig } from "./udp.js";

/** Which patches took (false: the library's internals were not as expected, its own path stays). */
export interface QuicPatchesInstalled {
  udpBuffers: boolean;
  shortHeaderRoute: boolean;
  recvLock?: boolean;
  streamScan?: boolean;
  sendBatch?: boolean;
  directSend?: boolean;
}

/**
 * Patches `owner` (a started QUICClient or QUICServer: its UDP socket's buffers, and short-header packets routed
 * straight to their connection; once per socket) and, given one, a connection of it: the light receive lock, one
 * stream walk per turn, coalesced drains, and packets sent straight to the owner's UDP socket.
 */
export function installQuicPatches(owner: object, connection?: object): QuicPatchesInstalled {
  const done: QuicPatchesInstalled = { udpBuffers: widenOnce(owner), shortHeaderRoute: routeShortHeaders(owner) };
  if (connection === undefined) return done;
  done.recvLock = lightenRecvLock(connection);
  // Before coalesceSends: the scan wraps the library's own drain, to walk the streams first.
  done.streamScan = lightenStreamScan(connection);
  done.sendBatch = coalesceSends(connection);
  done.directSend = sendPacketsDirectly(connection, owner);
  return done;
}

const widened = new WeakSet<object>();

function widenOnce(owner: object): boolean {
  if (widened.has(owner)) return true;
  const ok = widenUdpBuffers(owner);
  if (ok) widened.add(owner);
  return ok;
}
