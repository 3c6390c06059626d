// Client side of the iSCP WebSocket transport: `{ws|wss}://host/api/iscp/connect?enc=...`,
// one message per binary frame.
import WebSocket from "ws";
import type { MessageTransport } from "../message-transport.js";
import { WsSocketTransport } from "./socket-transport.js";
import type { Encoding } from "../../wire/message.js";
import { compressedTransport } from "../compression/compressed-transport.js";
import { compressionQuery, type CompressionParams } from "../compression/negotiation.js";

export interface WsConnectOptions {
  /** e.g. ws://127.0.0.1:8080/api/iscp/connect */
  url: string;
  encoding?: Encoding;
  /** Extra upgrade headers (iscp-go can send the token as `Authorization`). */
  headers?: Record<string, string>;
  /** TLS: trust this CA (PEM) for wss://. */
  ca?: string;
  timeoutMs?: number;
  lowWaterBytes?: number;
  /** iSCP's per-message DEFLATE (`comp`, `clevel`, `cwinbits` in the URL); off when absent. */
  compression?: CompressionParams;
  /** Largest message accepted from the server once decompressed. */
  maxIncomingMessageBytes?: number;
}

export function connectWebSocket(opts: WsConnectOptions): Promise<MessageTransport> {
  const encoding = opts.encoding ?? "proto";
  const url = new URL(opts.url);
  url.searchParams.set("enc", encoding);
  for (const [k, v] of Object.entries(compressionQuery(opts.compression))) url.searchParams.set(k, v);
  return new Promise((resolve, reject) => {
    // A zero masking key (RFC 6455 5.3 still holds: the MASK bit is set, the key is sent): masking guards
    // intermediaries against scripts in browsers, not an agent's own connection, and ws then sends the
    // frame as it is instead of copying every payload to mask it.
    const ws = new WebSocket(url, {
      headers: opts.headers,
      ca: opts.ca,
      perMessageDeflate: false,
      handshakeTimeout: opts.timeoutMs ?? 10_000,
      generateMask: zeroMask,
    });
    const fail = (e: Error) => reject(e);
    ws.once("error", fail);
    ws.once("unexpected-response", (_req, res) => {
      ws.removeListener("error", fail);
      ws.on("error", () => {});
      reject(new Error(`websocket upgrade refused: HTTP ${res.statusCode ?? "?"}`));
      res.resume();
    });
    ws.once("open", () => {
      ws.removeListener("error", fail);
      const t = new WsSocketTransport(ws, encoding, opts.lowWaterBytes ?? 512 * 1024);
      resolve(
        opts.compression && opts.compression.level > 0
          ? compressedTransport(t, opts.compression, opts.maxIncomingMessageBytes ?? 64 * 1024 * 1024)
          : t,
      );
    });
  });
}

function zeroMask(mask: Buffer): void {
  mask.fill(0);
}
