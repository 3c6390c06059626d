// Server side of the iSCP WebSocket transport: `GET /api/iscp/connect?enc=proto|json`, one message
// per binary frame, never text frames. Compression (`comp`) is refused with HTTP 400 because the
// client would otherwise send DEFLATE bytes the broker cannot read.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { MessageTransport } from "../message-transport.js";
import type { Encoding } from "../../wire/message.js";
import { releaseFrame } from "../received-frames.js";
import { receivedMessagePooling } from "./pooled-receive.js";

export class WsServerTransport implements MessageTransport {
  readonly kind = "websocket" as const;
  private inFlight = 0;
  private closed = false;
  private readonly closeCbs: ((reason: string) => void)[] = [];
  private drainCb: (() => void) | undefined;

  constructor(private readonly ws: WebSocket, readonly encoding: Encoding, private readonly lowWaterBytes: number) {
    ws.on("close", (code, reason) => this.fireClose(`websocket closed ${code} ${reason.toString()}`));
    ws.on("error", (err) => this.fireClose(`websocket error ${err.message}`));
  }

  send(frame: Uint8Array): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    const n = frame.length;
    this.inFlight += n;
    // The callback runs once the frame is handed to the socket: a peer that stops reading
    // leaves it pending, which is what the relay's backpressure watches.
    this.ws.send(frame, { binary: true }, (_err?: Error) => {
      const before = this.inFlight;
      this.inFlight -= n;
      if (before > this.lowWaterBytes && this.inFlight <= this.lowWaterBytes) this.drainCb?.();
    });
  }

  /** WebSocket has no unreliable path: every QoS goes on the socket. */
  sendUnreliable(frame: Uint8Array): void {
    this.send(frame);
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
      const frame = data instanceof Buffer ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      try {
        cb(frame);
      } finally {
        releaseFrame(frame); // a pooled frame (ws-pooled-receive.ts) goes back once its readers let go
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
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(1000);
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

export interface WsAcceptOptions {
  path: string;
  maxPayloadBytes: number;
  lowWaterBytes: number;
  onTransport(t: WsServerTransport, remote: string): void;
  /** Called once if ws's internals moved and large messages can no longer be received into reused buffers. */
  onPoolingUnavailable?(): void;
}

function reject(socket: Duplex, status: string, text: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}

/** Returns an `upgrade` listener that takes only requests for `path` and leaves others alone. */
export function wsUpgradeHandler(opts: WsAcceptOptions): { handle: (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean; close(): void } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxPayloadBytes, perMessageDeflate: false });
  const pool = receivedMessagePooling(opts.onPoolingUnavailable);
  const handle = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== opts.path) return false;
    socket.on("error", () => {}); // resets after a client's Disconnect must not crash the server
    if (req.method !== "GET") {
      reject(socket, "405 Method Not Allowed", "use GET");
      return true;
    }
    const q = url.searchParams;
    const encs = q.getAll("enc");
    const enc = encs[0] ?? "proto";
    if (encs.length > 1 || (enc !== "proto" && enc !== "json")) {
      reject(socket, "400 Bad Request", "enc must be proto or json");
      return true;
    }
    if (q.has("comp")) {
      reject(socket, "400 Bad Request", "compression is not supported");
      return true;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      pool(ws);
      const remote = `${req.socket.remoteAddress ?? "?"}:${req.socket.remotePort ?? "?"}`;
      opts.onTransport(new WsServerTransport(ws, enc, opts.lowWaterBytes), remote);
    });
    return true;
  };
  return { handle, close: () => wss.close() };
}
