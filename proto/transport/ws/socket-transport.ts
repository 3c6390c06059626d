// One iSCP message per binary WebSocket frame, over a ws socket that is already open: the part the client and
// the server transports share (they differ only in how the socket is opened or accepted).
import WebSocket from "ws";
import type { MessageTransport } from "../message-transport.js";
import type { Encoding } from "../../wire/message.js";
import { releaseFrame } from "../received-frames.js";

export class WsSocketTransport implements MessageTransport {
  readonly kind = "websocket" as const;
  private inFlight = 0;
  private closed = false;
  private readonly closeCbs: ((reason: string) => void)[] = [];
  private drainCb: (() => void) | undefined;

  constructor(
    private readonly ws: WebSocket,
    readonly encoding: Encoding,
    private readonly lowWaterBytes: number,
  ) {
    ws.on("close", (code, reason) => this.fireClose(`websocket closed ${code} ${reason.toString()}`.trimEnd()));
    ws.on("error", (err) => this.fireClose(`websocket error ${err.message}`));
  }

  send(frame: Uint8Array, written?: () => void): void {
    if (this.closed || this.ws.readyState !== WebSocket.OPEN) return written?.();
    const n = frame.length;
    this.inFlight += n;
    // ws calls back once the socket has written the frame (or failed to): its bytes are no longer read. A peer
    // that stops reading leaves it pending, which is what backpressure watches.
    this.ws.send(frame, { binary: true }, () => {
      const before = this.inFlight;
      this.inFlight -= n;
      written?.();
      if (before > this.lowWaterBytes && this.inFlight <= this.lowWaterBytes) this.drainCb?.();
    });
  }

  /** WebSocket has no unreliable path: every QoS goes on the socket. */
  sendUnreliable(frame: Uint8Array, written?: () => void): void {
    this.send(frame, written);
  }

  corked(fn: () => void): void {
    // ws writes each frame to its socket (net.Socket) at once; corked, a turn's frames go in one writev.
    const socket = (this.ws as unknown as { _socket?: { cork?(): void; uncork?(): void } })._socket;
    if (!socket?.cork || !socket.uncork) return fn();
    socket.cork();
    try {
      fn();
    } finally {
      socket.uncork();
    }
  }

  pauseInput(): void {
    this.ws.pause();
  }

  resumeInput(): void {
    this.ws.resume();
  }

  bufferedBytes(): number {
    return this.inFlight;
  }

  onMessage(cb: (frame: Uint8Array) => void): void {
    this.ws.on("message", (data, isBinary) => {
      if (!isBinary) return; // iSCP frames are binary; a text frame is ignored
      const frame =
        data instanceof Buffer ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      try {
        cb(frame);
      } finally {
        releaseFrame(frame); // a pooled frame (pooled-receive.ts) goes back once its readers let go; others are not leased
      }
    });
  }

  onDrain(cb: () => void): void {
    this.drainCb = cb;
  }

  onClose(cb: (reason: string) => void): void {
    this.closeCbs.push(cb);
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000);
    // A peer that never answers the close handshake is cut off.
    setTimeout(() => this.ws.terminate(), 2000).unref();
  }

  terminate(): void {
    this.ws.terminate();
  }

  private fireClose(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const cb of this.closeCbs) cb(reason);
  }
}
