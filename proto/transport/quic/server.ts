// Server side of the iSCP QUIC transport (aptpod/iscp-go transport/quic) on @matrixai/quic:
// ALPN "iscp", TLS 1.3. The client's first unidirectional stream carries the negotiation
// parameters, its second one all client->server messages; the server opens one unidirectional
// stream for server->client messages. Each message is `u32be length, bytes`.
// QUIC DATAGRAMs are enabled: sendUnreliable() segments a message onto them (iSCP 8-byte segment
// header, datagrams.ts) and messages rebuilt from them reach onMessage flagged.
// Each negotiated connection is handed to the caller as a MessageTransport (the broker runs iSCP over it).
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { QUICServer, events, type QUICConnection, type QUICStream } from "@matrixai/quic";
import { QuicConnectionTransport } from "./connection-transport.js";
import { QUIC_SHARED_CONFIG, quietLogger } from "./tuning.js";
import { installQuicPatches } from "./patches/index.js";
import { decodeNegotiation, type MessageTransport } from "../message-transport.js";
import type { Encoding } from "../../wire/message.js";
import { compressedTransport } from "../compression/compressed-transport.js";
import { readCompression } from "../compression/negotiation.js";

class QuicServerTransport extends QuicConnectionTransport {
  constructor(conn: QUICConnection, encoding: Encoding, lowWaterBytes: number, maxIncomingMessageBytes: number) {
    super(conn, conn.newStream("uni").writable.getWriter(), encoding, lowWaterBytes, maxIncomingMessageBytes);
  }

  /** Feeds the client's message stream; the connection ends with it (or on a framing error). */
  async readFrom(stream: QUICStream, maxMessageBytes: number): Promise<void> {
    await this.readMessages(stream, maxMessageBytes, "client");
    this.terminate();
  }

  close(): void {
    // Let queued frames go out before the connection is closed.
    this.closeAfterFlush(() => this.conn.stop({ isApp: true, errorCode: 0 }));
  }

  terminate(): void {
    void this.conn.stop({ isApp: true, errorCode: 0, force: true }).catch(() => {});
  }
}

async function readAll(stream: QUICStream, limit: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let n = 0;
  for await (const c of stream.readable) {
    n += c.length;
    if (n > limit) throw new Error("negotiation stream too long");
    parts.push(c);
  }
  return Buffer.concat(parts);
}

/** What the QUIC listener needs from its caller: limits, and where accepted connections go. */
export interface QuicListenOptions {
  host?: string;
  port?: number;
  /** PEM TLS key and certificate. */
  key: string;
  cert: string;
  maxIdleTimeoutMs?: number;
  /** Largest length a message on the client's stream may declare; a larger one ends the connection. */
  maxStreamMessageBytes: number;
  /** Largest message rebuilt from datagrams. */
  maxIncomingMessageBytes: number;
  /** bufferedBytes() below which a transport fires onDrain. */
  lowWaterBytes: number;
  /** Each negotiated connection, as a transport; `remote` is `host:port`. */
  onTransport(t: MessageTransport, remote: string): void;
  /** A connection refused before it became a transport (bad negotiation, unsupported parameters). */
  onRefused?(remote: string, why: string): void;
  onError?(err: unknown): void;
}

function serveConnection(opts: QuicListenOptions, conn: QUICConnection, server: QUICServer): void {
  installQuicPatches(server, conn);
  let negotiated: Promise<Record<string, string>> | undefined;
  let messages: QUICStream | undefined;
  const remote = `${conn.remoteHost}:${conn.remotePort}`;
  const fail = (why: string) => {
    opts.onRefused?.(remote, why);
    void conn.stop({ isApp: true, errorCode: 1 }).catch(() => {});
  };
  const begin = () => {
    if (!negotiated || !messages) return;
    const stream = messages;
    void negotiated.then(
      (params) => {
        const enc = params.enc ?? "proto";
        if (enc !== "proto" && enc !== "json") return fail(`unknown enc ${enc}`);
        // Both published clients compress every QUIC message alone, whatever `comp` says.
        const { params: compression, error } = readCompression((k) => params[k], false);
        if (error) return fail(error);
        const t = new QuicServerTransport(conn, enc, opts.lowWaterBytes, opts.maxIncomingMessageBytes);
        opts.onTransport(compression ? compressedTransport(t, compression, opts.maxStreamMessageBytes) : t, remote);
        void t.readFrom(stream, opts.maxStreamMessageBytes);
      },
      () => {},
    );
  };
  conn.addEventListener(events.EventQUICConnectionStream.name, (evt: Event) => {
    const stream = (evt as unknown as events.EventQUICConnectionStream).detail;
    // Client-initiated unidirectional stream ids are 2, 6, 10, ...: the first one negotiates,
    // the second carries messages (ids, not arrival order, decide).
    const id = Number(stream.streamId);
    if (id === 2) {
      negotiated = readAll(stream, 64 * 1024).then(decodeNegotiation);
      negotiated.catch(() => fail("bad negotiation stream"));
      begin();
    } else if (id === 6) {
      messages = stream;
      begin();
    } else {
      void stream.readable.cancel().catch(() => {});
    }
  });
}

/** Listens for iSCP QUIC connections; each negotiated one goes to `opts.onTransport`. */
export async function listenQuic(
  opts: QuicListenOptions,
): Promise<{ port: number; setCertificate(pem: { key: string; cert: string }): void; close(): Promise<void> }> {
  const hmacKey = randomBytes(32);
  const server = new QUICServer({
    logger: quietLogger(),
    crypto: {
      key: hmacKey.buffer.slice(hmacKey.byteOffset, hmacKey.byteOffset + hmacKey.byteLength) as ArrayBuffer,
      ops: {
        async sign(key, data) {
          const d = createHmac("sha256", Buffer.from(key)).update(Buffer.from(data)).digest();
          return d.buffer.slice(d.byteOffset, d.byteOffset + d.byteLength) as ArrayBuffer;
        },
        async verify(key, data, sig) {
          const d = createHmac("sha256", Buffer.from(key)).update(Buffer.from(data)).digest();
          const s = Buffer.from(sig);
          return s.length === d.length && timingSafeEqual(s, d);
        },
      },
    },
    config: {
      key: opts.key,
      cert: opts.cert,
      verifyPeer: false,
      applicationProtos: ["iscp"],
      // Accepting large packets is always safe; the server sends at most the default (one config for all peers).
      maxIdleTimeout: opts.maxIdleTimeoutMs ?? 60_000,
      ...QUIC_SHARED_CONFIG,
    },
  });
  server.addEventListener(events.EventQUICServerConnection.name, (evt: Event) => {
    serveConnection(opts, (evt as unknown as events.EventQUICServerConnection).detail, server);
  });
  server.addEventListener(events.EventQUICServerError.name, (evt: Event) => {
    opts.onError?.((evt as unknown as events.EventQUICServerError).detail);
  });
  await server.start({ host: opts.host ?? "127.0.0.1", port: opts.port ?? 0 });
  installQuicPatches(server);
  const close = async () => {
    await server.stop({ isApp: true, errorCode: 0, force: true }).catch(() => {});
  };
  // Each new connection copies the server's config, so a new pair applies to new connections only.
  return { port: server.port, setCertificate: ({ key, cert }) => server.updateConfig({ key, cert }), close };
}
