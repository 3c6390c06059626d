// Client side of the iSCP QUIC transport on @matrixai/quic: ALPN "iscp"; uni stream 1 carries the
// negotiation parameters, uni stream 2 the client's messages (`u32be length, bytes` each);
// the server answers on one uni stream of its own. QUIC DATAGRAMs are enabled: sendUnreliable()
// segments a message onto them (iSCP 8-byte segment header, datagrams.ts) and
// messages rebuilt from them reach onMessage flagged as unreliable.
import { randomFillSync } from "node:crypto";
import { QUICClient, events } from "@matrixai/quic";
import { QuicConnectionTransport } from "./connection-transport.js";
import { QUIC_SHARED_CONFIG, quietLogger } from "./tuning.js";
import { installQuicPatches, udpPayloadConfig } from "./patches/index.js";
import { encodeNegotiation, type MessageTransport } from "../message-transport.js";
import type { Encoding } from "../../wire/message.js";
import { compressedTransport } from "../compression/compressed-transport.js";
import { compressionQuery, type CompressionParams } from "../compression/negotiation.js";

export interface QuicConnectOptions {
  host: string;
  port: number;
  encoding?: Encoding;
  /** PEM CA to verify the server with; without it the server certificate is not verified. */
  ca?: string;
  serverName?: string;
  maxIncomingMessageBytes?: number;
  maxIdleTimeoutMs?: number;
  /** iSCP's per-message DEFLATE, negotiated as iscp-rs does (no context takeover on QUIC); off when absent. */
  compression?: CompressionParams;
  /** Further negotiation parameters, sent as they are (e.g. what another client sends). */
  extraNegotiation?: Record<string, string>;
}

const LOW_WATER = 256 * 1024;

class QuicClientTransport extends QuicConnectionTransport {
  constructor(
    private readonly client: QUICClient,
    writer: WritableStreamDefaultWriter<Uint8Array>,
    encoding: Encoding,
    maxIn: number,
  ) {
    super(client.connection, writer, encoding, LOW_WATER, maxIn);
    let serverStreams = 0;
    this.conn.addEventListener(events.EventQUICConnectionStream.name, (evt: Event) => {
      const stream = (evt as unknown as events.EventQUICConnectionStream).detail;
      if (++serverStreams === 1) void this.readMessages(stream, maxIn, "server");
      else void stream.readable.cancel().catch(() => {});
    });
    client.addEventListener(events.EventQUICClientError.name, () => this.fireClose("quic client error"));
  }

  close(): void {
    this.closeAfterFlush(() => this.client.destroy({ isApp: true, errorCode: 0 }));
    this.fireClose("closed");
  }

  terminate(): void {
    void this.client.destroy({ isApp: true, errorCode: 0, force: true }).catch(() => {});
    this.fireClose("terminated");
  }
}

export async function connectQuic(opts: QuicConnectOptions): Promise<MessageTransport> {
  const encoding = opts.encoding ?? "proto";
  const client = await QUICClient.createQUICClient({
    logger: quietLogger(),
    host: opts.host,
    port: opts.port,
    serverName: opts.serverName,
    crypto: {
      ops: {
        async randomBytes(data: ArrayBuffer) {
          randomFillSync(new Uint8Array(data));
        },
      },
    },
    config: {
      verifyPeer: opts.ca !== undefined,
      ca: opts.ca,
      applicationProtos: ["iscp"],
      maxIdleTimeout: opts.maxIdleTimeoutMs ?? 60_000,
      keepAliveIntervalTime: 5_000,
      ...QUIC_SHARED_CONFIG,
      ...(await udpPayloadConfig(opts.host)),
    },
  });
  const conn = client.connection;
  installQuicPatches(client, conn);
  const neg = conn.newStream("uni").writable.getWriter();
  const compression =
    opts.compression && opts.compression.level > 0 ? { ...opts.compression, contextTakeover: false } : undefined;
  await neg.write(encodeNegotiation({ enc: encoding, ...compressionQuery(compression), ...opts.extraNegotiation }));
  await neg.close();
  const writer = conn.newStream("uni").writable.getWriter();
  const maxIn = opts.maxIncomingMessageBytes ?? 8 * 1024 * 1024;
  const t = new QuicClientTransport(client, writer, encoding, maxIn);
  return compression ? compressedTransport(t, compression, maxIn) : t;
}
