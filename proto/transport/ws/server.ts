// Server side of the iSCP WebSocket transport: `GET /api/iscp/connect?enc=proto|json`, one message
// per binary frame, never text frames. Compression (`comp`) is refused with HTTP 400 because the
// client would otherwise send DEFLATE bytes the broker cannot read.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { MessageTransport } from "../message-transport.js";
import { receivedMessagePooling } from "./pooled-receive.js";
import { WsSocketTransport } from "./socket-transport.js";

export interface WsAcceptOptions {
  path: string;
  maxPayloadBytes: number;
  lowWaterBytes: number;
  onTransport(t: MessageTransport, remote: string): void;
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
      opts.onTransport(new WsSocketTransport(ws, enc, opts.lowWaterBytes), remote);
    });
    return true;
  };
  return { handle, close: () => wss.close() };
}
