// Client side of the iSCP QUIC transport on @matrixai/quic: ALPN "iscp"; uni stream 1 carries the
// negotiation parameters, uni stream 2 the client's messages (`u32be length, bytes` each);
// the server answers on one uni stream of its own. QUIC DATAGRAMs are enabled: sendUnreliable()
// segments a message onto them (iSCP 8-byte segment header, proto/transport/quic/datagrams.ts) and
// messages rebuilt from them reach onMessage flagged as unreliable.
import { randomFillSync } from "node:crypto";
import Logger, { LogLevel } from "@matrixai/logger";
import { QUICClient, events, type QUICStream } from "@matrixai/quic";
import type { DatagramStats } from "../../wire/datagram.js";
import { QuicDatagramChannel } from "./datagrams.js";
import { flushSends } from "./patches/send-batch.js";
import { QUIC_SHARED_CONFIG, tuneQuicConnection } from "./tuning.js";
import { udpPayloadConfig, widenUdpBuffers } from "./patches/udp.js";
import { encodeNegotiation, lengthPrefixed, LengthPrefixedReader, type MessageTransport } from "../message-transport.js";
import type { Encoding } from "../../wire/message.js";

export interface QuicConnectOptions {
  host: string;
  port: number;
  encoding?: Encoding;
  /** PEM CA to verify the server with; without it the server certificate is not verified. */
  ca?: string;
  serverName?: string;
  maxIncomingMessageBytes?: number;
  maxIdleTimeoutMs?: number;
}

const LOW_WATER = 256 * 1024;

class QuicClientTransport implements MessageTransport {
  readonly kind = "quic" as const;
  private inFlight = 0;
  private closed = false;
  private readonly closeCbs: ((reason: string) => void)[] = [];
  private messageCb: ((f: Uint8Array, unreliable?: boolean) => void) | undefined;
  private drainCb: (() => void) | undefined;
  private readonly dgram: QuicDatagramChannel;

  constructor(private readonly client: QUICClient, private readonly writer: WritableStreamDefaultWriter<Uint8Array>, readonly encoding: Encoding, maxIn: number) {
    const conn = client.connection;
    this.dgram = new QuicDatagramChannel(conn, { maxIncomingMessageBytes: maxIn });
    this.dgram.onDrain(() => {
      if (this.bufferedBytes() <= LOW_WATER) this.drainCb?.();
    });
    let serverStreams = 0;
    conn.addEventListener(events.EventQUICConnectionStream.name, (evt: Event) => {
      const stream = (evt as unknown as events.EventQUICConnectionStream).detail;
      if (++serverStreams === 1) void this.readFrom(stream, maxIn);
      else void stream.readable.cancel().catch(() => {});
    });
    conn.addEventListener(events.EventQUICConnectionStopped.name, () => this.fireClose("quic connection stopped"), { once: true });
    client.addEventListener(events.EventQUICClientError.name, () => this.fireClose("quic client error"));
  }

  private async readFrom(stream: QUICStream, maxIn: number): Promise<void> {
    const reader = new LengthPrefixedReader(maxIn);
    try {
      for await (const chunk of stream.readable) for (const m of reader.push(chunk)) this.messageCb?.(m);
      this.fireClose("server finished its stream");
    } catch (e) {
      this.fireClose(`quic read failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  send(frame: Uint8Array): void {
    if (this.closed) return;
    const n = frame.length;
    this.inFlight += n;
    this.writer.write(lengthPrefixed(frame)).then(
      () => {
        const before = this.inFlight;
        this.inFlight -= n;
        if (before > LOW_WATER && this.inFlight <= LOW_WATER) this.drainCb?.();
      },
      () => this.fireClose("quic write failed"),
    );
  }

  /** On datagrams when the server enabled them, else on the stream. */
  sendUnreliable(frame: Uint8Array): void {
    if (this.closed) return;
    if (!this.dgram.send(frame)) this.send(frame);
  }

  bufferedBytes(): number {
    return this.inFlight + this.dgram.pendingBytes();
  }

  onMessage(cb: (frame: Uint8Array, unreliable?: boolean) => void): void {
    this.messageCb = cb;
    this.dgram.onMessage((m) => this.messageCb?.(m, true));
  }

  datagramStats(): DatagramStats {
    return this.dgram.stats();
  }

  onDrain(cb: () => void): void {
    this.drainCb = cb;
  }

  onClose(cb: (reason: string) => void): void {
    this.closeCbs.push(cb);
  }

  close(): void {
    void this.writer.close().catch(() => {}).then(() => flushSends(this.client.connection)).catch(() => {}).finally(() => {
      void this.client.destroy({ isApp: true, errorCode: 0 }).catch(() => {});
    });
    this.fireClose("closed");
  }

  terminate(): void {
    void this.client.destroy({ isApp: true, errorCode: 0, force: true }).catch(() => {});
    this.fireClose("terminated");
  }

  private fireClose(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.dgram.close();
    for (const cb of this.closeCbs) cb(reason);
  }
}

export async function connectQuic(opts: QuicConnectOptions): Promise<MessageTransport> {
  const encoding = opts.encoding ?? "proto";
  const client = await QUICClient.createQUICClient({
    logger: quietLogger(),
    host: opts.host,
    port: opts.port,
    serverName: opts.serverName,
    crypto: { ops: { async randomBytes(data: ArrayBuffer) { randomFillSync(new Uint8Array(data)); } } },
    config: {
      verifyPeer: opts.ca !== undefined, ca: opts.ca, applicationProtos: ["iscp"],
      maxIdleTimeout: opts.maxIdleTimeoutMs ?? 60_000, keepAliveIntervalTime: 5_000, ...QUIC_SHARED_CONFIG,
      ...(await udpPayloadConfig(opts.host)),
    },
  });
  widenUdpBuffers(client);
  const conn = client.connection;
  tuneQuicConnection(conn, client);
  const neg = conn.newStream("uni").writable.getWriter();
  await neg.write(encodeNegotiation({ enc: encoding }));
  await neg.close();
  const writer = conn.newStream("uni").writable.getWriter();
  return new QuicClientTransport(client, writer, encoding, opts.maxIncomingMessageBytes ?? 8 * 1024 * 1024);
}

/** @matrixai/quic logs every stream at INFO by default. */
function quietLogger(): Logger {
  return new Logger("iscp-quic", LogLevel.ERROR);
}
