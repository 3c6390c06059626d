// Client side of the iSCP WebSocket transport: `{ws|wss}://host/api/iscp/connect?enc=...`,
// one message per binary frame.
import WebSocket from "ws";
import type { MessageTransport } from "../message-transport.js";
import type { Encoding } from "../../wire/message.js";

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
}

class WsClientTransport implements MessageTransport {
  readonly kind = "websocket" as const;
  private inFlight = 0;
  private closed = false;
  private readonly closeCbs: ((reason: string) => void)[] = [];
  private drainCb: (() => void) | undefined;

  constructor(private readonly ws: WebSocket, readonly encoding: Encoding, private readonly lowWater: number) {
    ws.on("close", (code) => this.fireClose(`websocket closed ${code}`));
    ws.on("error", (e) => this.fireClose(`websocket error ${e.message}`));
  }

  send(frame: Uint8Array, written?: () => void): void {
    if (this.closed || this.ws.readyState !== WebSocket.OPEN) return written?.();
    const n = frame.length;
    this.inFlight += n;
    // ws calls back once the socket has written the frame (or failed to): its bytes are no longer read.
    this.ws.send(frame, { binary: true }, () => {
      const before = this.inFlight;
      this.inFlight -= n;
      written?.();
      if (before > this.lowWater && this.inFlight <= this.lowWater) this.drainCb?.();
    });
  }

  /** WebSocket has no unreliable path: every QoS goes on the socket. */
  sendUnreliable(frame: Uint8Array, written?: () => void): void {
    this.send(frame, written);
  }

  bufferedBytes(): number {
    return this.inFlight;
  }

  onMessage(cb: (frame: Uint8Array) => void): void {
    this.ws.on("message", (data, isBinary) => {
      if (!isBinary) return;
      cb(data instanceof Buffer ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer));
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

export function connectWebSocket(opts: WsConnectOptions): Promise<MessageTransport> {
  const encoding = opts.encoding ?? "proto";
  const url = new URL(opts.url);
  url.searchParams.set("enc", encoding);
  return new Promise((resolve, reject) => {
    // A zero masking key (RFC 6455 5.3 still holds: the MASK bit is set, the key is sent): masking guards
    // intermediaries against scripts in browsers, not an agent's own connection, and ws then sends the
    // frame as it is instead of copying every payload to mask it.
    const ws = new WebSocket(url, { headers: opts.headers, ca: opts.ca, perMessageDeflate: false, handshakeTimeout: opts.timeoutMs ?? 10_000, generateMask: zeroMask });
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
      resolve(new WsClientTransport(ws, encoding, opts.lowWaterBytes ?? 512 * 1024));
    });
  });
}

function zeroMask(mask: Buffer): void {
  mask.fill(0);
}
