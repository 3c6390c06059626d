// @matrixai/quic routes each UDP packet to its connection by parsing the packet's header in the native binding
// (an object with fresh byte arrays per packet), wrapping the destination connection id in a QUICConnectionId
// (a Uint8Array subclass that hex-encodes itself) and looking that up. Once a connection is established almost
// every packet has a short header: a flag byte, then the destination connection id, which is always one we
// issued and so always quiche.MAX_CONN_ID_LEN (20) bytes long. Those are routed here from the bytes themselves,
// by the same hex key the library's map uses; every other packet (long headers: handshakes and new
// connections; ids we do not know) takes the library's path unchanged. It reaches into the library's internals
// (a QUICSocket's `socket`, `connectionMap` and `handleSocketMessage`); should they change, nothing is swapped.
import type dgram from "node:dgram";
import { native } from "@matrixai/quic";

interface RoutedConnection {
  recv(data: Uint8Array, from: { host: string; port: number }): Promise<void>;
}

interface LibrarySocket {
  socket?: dgram.Socket;
  connectionMap?: { get(id: string): RoutedConnection | undefined };
  handleSocketMessage?: (data: Buffer, from: dgram.RemoteInfo) => Promise<void>;
}

const CID_BYTES: number = native.quiche.MAX_CONN_ID_LEN;
/** The header form bit: clear on a short-header (1-RTT) packet. */
const LONG_HEADER = 0x80;
const routed = new WeakSet<object>();

/**
 * Routes short-header packets arriving on `owner`'s (a QUICClient or QUICServer) started socket straight to their
 * connection. Once per socket: a server's connections share one. False when the internals are not as expected.
 */
export function routeShortHeaders(owner: object): boolean {
  const s = (owner as { socket?: LibrarySocket }).socket;
  if (s === undefined || s === null) return false;
  if (routed.has(s)) return true;
  const { socket: udp, connectionMap: map, handleSocketMessage: viaLibrary } = s;
  if (!udp || typeof udp.listeners !== "function" || typeof map?.get !== "function" || typeof viaLibrary !== "function")
    return false;
  if (!udp.listeners("message").includes(viaLibrary)) return false;
  const route = (data: Buffer, from: dgram.RemoteInfo): Promise<void> => {
    if (data.length > CID_BYTES && (data[0]! & LONG_HEADER) === 0) {
      const connection = map.get(data.toString("hex", 1, 1 + CID_BYTES));
      if (connection !== undefined) return connection.recv(data, { host: from.address, port: from.port });
    }
    return viaLibrary(data, from);
  };
  udp.off("message", viaLibrary);
  udp.on("message", route);
  // The library's stop removes `handleSocketMessage` from the socket: it must find the route.
  s.handleSocketMessage = route;
  routed.add(s);
  return true;
}
