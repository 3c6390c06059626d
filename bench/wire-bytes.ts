// Bytes of iSCP frames as they go over the wire, for the benchmarks: a MessageTransport put under the compression
// layer counts what it sends and receives.
import type { MessageTransport } from "../proto/transport/message-transport.js";

/** Frame bytes as they go over the wire (after compression): counted under the compression layer. */
export interface WireBytes {
  sent: number;
  received: number;
}
export function countBytes(t: MessageTransport, wire: WireBytes): MessageTransport {
  const counted = (f: (frame: Uint8Array, w?: () => void) => void) => (frame: Uint8Array, w?: () => void) => {
    wire.sent += frame.length;
    f(frame, w);
  };
  return new Proxy(t, {
    get(target, prop) {
      if (prop === "send") return counted(target.send.bind(target));
      if (prop === "sendUnreliable") return counted(target.sendUnreliable.bind(target));
      if (prop === "onMessage")
        return (cb: (frame: Uint8Array, u?: boolean) => void) =>
          target.onMessage((frame, u) => {
            wire.received += frame.length;
            cb(frame, u);
          });
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}
