// @matrixai/quic hands every UDP packet a connection builds to its socket through an event: the packet is
// wrapped in an EventQUICConnectionSend, dispatched through the connection's EventTarget (and its catch-all
// listener), received by an async handler of the client or server, and sent through a promisified
// dgram.send, so each packet costs an event, two dispatches, two promises and a closure. Profiled on both ends
// of a bulk transfer, that path was a large share of the busy time (the receiving end pays it for every ACK). This
// sends a connection's packets straight to the UDP socket instead. A packet the socket refuses is handed to
// the library's own path, which sends it again and reports the failure as it always did (a duplicate packet is
// harmless in QUIC). It reaches into the library's internals (`dispatchEvent`, the event's `detail`, the
// owner's `socket.socket`); should they change, nothing is swapped.
import { events } from "@matrixai/quic";
import { udpSocketOf } from "./udp.js";

interface SendDetail {
  msg: Uint8Array;
  port: number;
  address: string;
}

/** Sends `connection`'s packets straight to the UDP socket of `owner` (the connection's client or server). */
export function sendPacketsDirectly(connection: object, owner: object): boolean {
  const c = connection as { dispatchEvent?: (evt: Event) => boolean };
  const udp = udpSocketOf(owner);
  const dispatch = c.dispatchEvent;
  if (!udp || typeof dispatch !== "function") return false;
  const viaLibrary = (evt: Event): boolean => dispatch.call(connection, evt);
  c.dispatchEvent = (evt: Event): boolean => {
    if (!(evt instanceof events.EventQUICConnectionSend)) return viaLibrary(evt);
    const d = (evt as unknown as { detail: SendDetail }).detail;
    try {
      udp.send(d.msg, d.port, d.address, (err) => {
        if (err) viaLibrary(evt);
      });
    } catch {
      // A closed socket throws at once; the library's path knows to drop the packet then.
      return viaLibrary(evt);
    }
    return true;
  };
  return true;
}
