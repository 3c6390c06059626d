// Server side of the iSCP WebSocket transport: `GET /api/iscp/connect?enc=proto|json`, one message
// per binary frame, never text frames. `comp`, `clevel` and `cwinbits` negotiate iSCP's own per-message
// DEFLATE (compression/negotiation.ts); WebSocket's permessage-deflate extension is not used.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { MessageTransport } from "../message-transport.js";
import { receivedMessagePooling } from "./pooled-receive.js";
import { WsSocketTransport } from "./socket-transport.js";
import { compressedTransport } from "../compression/compressed-transport.js";
import { readCompression } from "../compression/negotiation.js";

/** The body of an HTTP refusal of an upgrade: the server's error format for `status` and `title`. */
export type UpgradeRefusalBody = (status: number, title: string) => { contentType: string; body: string };

export interface WsAcceptOptions {
  path: string;
  maxPayloadBytes: number;
  lowWaterBytes: number;
  onTransport(t: MessageTransport, remote: string): void;
  /** Called once if ws's internals moved and large messages can no longer be received into reused buffers. */
  onPoolingUnavailable?(): void;
  /** How refusals are written; plain text when absent. */
  refusalBody?: UpgradeRefusalBody;
}

const STATUS_TEXT: Record<number, string> = { 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed" };
const plainRefusal: UpgradeRefusalBody = (_status, title) => ({
  contentType: "text/plain; charset=utf-8",
  body: title,
});

/**
 * Answers an upgrade with an HTTP error and frees the socket. The HTTP server hands upgraded sockets over
 * half-open and paused, so a socket merely ended would never see the peer's FIN and stay open (CLOSE_WAIT):
 * it is destroyed once the answer is flushed, or after a short wait for a peer that does not read it.
 */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  title: string,
  render: UpgradeRefusalBody = plainRefusal,
): void {
  socket.on("error", () => {});
  const { contentType, body } = render(status, title);
  const head = `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"}\r\nConnection: close\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const cut = setTimeout(() => socket.destroy(), 2000);
  cut.unref();
  socket.end(head + body, () => {
    clearTimeout(cut);
    socket.destroy();
  });
}

/**
 * Returns an `upgrade` listener that takes every upgrade request: the WebSocket handshake for `path`,
 * an HTTP error (404 for any other path) otherwise, so no upgraded socket is left unanswered.
 */
export function wsUpgradeHandler(opts: WsAcceptOptions): {
  handle: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  close(): void;
} {
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxPayloadBytes, perMessageDeflate: false });
  const pool = receivedMessagePooling(opts.onPoolingUnavailable);
  const refuse = (socket: Duplex, status: number, title: string) =>
    refuseUpgrade(socket, status, title, opts.refusalBody);
  const handle = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== opts.path)
      return refuse(socket, 404, `no WebSocket API at ${req.method ?? "GET"} ${url.pathname}`);
    socket.on("error", () => {}); // resets after a client's Disconnect must not crash the server
    if (req.method !== "GET") return refuse(socket, 405, "use GET");
    const q = url.searchParams;
    const encs = q.getAll("enc");
    const enc = encs[0] ?? "proto";
    if (encs.length > 1 || (enc !== "proto" && enc !== "json")) return refuse(socket, 400, "enc must be proto or json");
    for (const k of ["comp", "clevel", "cwinbits"])
      if (q.getAll(k).length > 1) return refuse(socket, 400, `${k} must be given once`);
    const { params: compression, error } = readCompression((k) => q.get(k) ?? undefined, true);
    if (error) return refuse(socket, 400, error);
    wss.handleUpgrade(req, socket, head, (ws) => {
      pool(ws);
      const remote = `${req.socket.remoteAddress ?? "?"}:${req.socket.remotePort ?? "?"}`;
      const t = new WsSocketTransport(ws, enc, opts.lowWaterBytes);
      opts.onTransport(compression ? compressedTransport(t, compression, opts.maxPayloadBytes, true) : t, remote);
    });
  };
  return { handle, close: () => wss.close() };
}
