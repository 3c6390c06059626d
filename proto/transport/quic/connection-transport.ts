// What the iSCP QUIC client and server transports share once a connection is up: messages out on this end's
// unidirectional stream (`u32be length, bytes` each), messages in from the peer's, QUIC DATAGRAMs for the
// unreliable path (datagrams.ts), backpressure counts, input pausing and close reporting. The two ends differ only
// in how the connection is opened or accepted and in how it is stopped.
import { events, type QUICConnection, type QUICStream } from "@matrixai/quic";
import type { DatagramStats } from "../../wire/datagram.js";
import type { Encoding } from "../../wire/message.js";
import { lengthPrefixed, LengthPrefixedReader, type MessageTransport } from "../message-transport.js";
import { QuicDatagramChannel } from "./datagrams.js";
import { flushSends } from "./patches/index.js";

export abstract class QuicConnectionTransport implements MessageTransport {
  readonly kind = "quic" as const;
  private inFlight = 0;
  private closed = false;
  private readonly closeCbs: ((reason: string) => void)[] = [];
  private messageCb: ((f: Uint8Array, unreliable?: boolean) => void) | undefined;
  private drainCb: (() => void) | undefined;
  private readonly dgram: QuicDatagramChannel;
  private inputGate: Promise<void> | undefined;
  private openInput: (() => void) | undefined;

  constructor(
    protected readonly conn: QUICConnection,
    private readonly writer: WritableStreamDefaultWriter<Uint8Array>,
    readonly encoding: Encoding,
    private readonly lowWaterBytes: number,
    maxIncomingMessageBytes: number,
  ) {
    this.dgram = new QuicDatagramChannel(conn, { maxIncomingMessageBytes });
    this.dgram.onDrain(() => {
      if (this.bufferedBytes() <= this.lowWaterBytes) this.drainCb?.();
    });
    conn.addEventListener(events.EventQUICConnectionStopped.name, () => this.fireClose("quic connection stopped"), {
      once: true,
    });
  }

  /** Feeds the peer's message stream to onMessage until it ends; framing errors close the transport. */
  protected async readMessages(stream: QUICStream, maxMessageBytes: number, peer: string): Promise<void> {
    const reader = new LengthPrefixedReader(maxMessageBytes);
    const chunks = stream.readable.getReader();
    try {
      for (;;) {
        if (this.inputGate) await this.inputGate;
        const { value, done } = await chunks.read();
        if (done) break;
        for (const m of reader.push(value)) this.messageCb?.(m);
      }
      this.fireClose(`${peer} finished its stream`);
    } catch (e) {
      this.fireClose(`quic read failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /**
   * Stops reading the peer's stream (storage is behind). quiche then stops extending the stream's flow-control
   * window, so the peer can send at most that window more: its writes wait, as a paused TCP socket's would.
   */
  pauseInput(): void {
    this.inputGate ??= new Promise<void>((r) => (this.openInput = r));
  }

  resumeInput(): void {
    const open = this.openInput;
    this.inputGate = this.openInput = undefined;
    open?.();
  }

  send(frame: Uint8Array): void {
    if (this.closed) return;
    const n = frame.length;
    this.inFlight += n;
    this.writer.write(lengthPrefixed(frame)).then(
      () => {
        const before = this.inFlight;
        this.inFlight -= n;
        if (before > this.lowWaterBytes && this.inFlight <= this.lowWaterBytes) this.drainCb?.();
      },
      () => this.fireClose("quic write failed"),
    );
  }

  /** On datagrams when the peer enabled them, else on the stream. */
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

  abstract close(): void;
  abstract terminate(): void;

  /** Ends this end's stream and sends what the connection still holds, then runs `stop`. */
  protected closeAfterFlush(stop: () => Promise<unknown>): void {
    void this.writer
      .close()
      .catch(() => {})
      .then(() => flushSends(this.conn))
      .catch(() => {})
      .finally(() => stop().catch(() => {}));
  }

  protected fireClose(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.resumeInput(); // a paused read then ends with the stream
    this.dgram.close();
    for (const cb of this.closeCbs) cb(reason);
  }
}
