// `ws` copies a message that spans socket reads into a new buffer (its Receiver's `consume`). On the broker's
// connections those copies of 64 KiB and more come from received-frames.ts instead, which reuses them once
// the connection and its readers are done (see there). `consume` and its `_buffers` / `_bufferedBytes` are
// internals of ws 8's Receiver: when they are not there, the connection keeps ws's own (a test watches this).
import type { WebSocket } from "ws";
import { POOLED_MIN } from "../../wire/buffer-pool.js";
import { takeFront } from "../chunk-list.js";
import { takeFrame } from "../received-frames.js";

interface ReceiverInternals {
  consume(n: number): Buffer;
  _buffers: Buffer[];
  _bufferedBytes: number;
}

const hasInternals = (r: Partial<ReceiverInternals> | undefined): r is ReceiverInternals =>
  r !== undefined &&
  typeof r.consume === "function" &&
  Array.isArray(r._buffers) &&
  typeof r._bufferedBytes === "number";

/** Makes `ws` assemble large messages in pooled frames; false when its Receiver's internals moved. */
export function poolReceivedMessages(ws: WebSocket): boolean {
  const r = (ws as unknown as { _receiver?: Partial<ReceiverInternals> })._receiver;
  if (!hasInternals(r)) return false;
  const own = r.consume;
  r.consume = function (n: number): Buffer {
    const first = this._buffers[0];
    // A view into one read, or a small copy: as ws does it.
    if (n < POOLED_MIN || first === undefined || n <= first.length) return own.call(this, n);
    this._bufferedBytes -= n;
    const dst = takeFrame(n);
    takeFront(this._buffers, dst);
    return dst;
  };
  return true;
}

/** poolReceivedMessages for each connection, calling `onUnavailable` the first time ws's internals are not there. */
export function receivedMessagePooling(onUnavailable?: () => void): (ws: WebSocket) => void {
  let reported = false;
  return (ws) => {
    if (poolReceivedMessages(ws) || reported) return;
    reported = true;
    onUnavailable?.();
  };
}
