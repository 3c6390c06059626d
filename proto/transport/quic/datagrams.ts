// QUIC DATAGRAM path of one @matrixai/quic connection, for both the broker and our client.
// @matrixai/quic 2.0.9 negotiates datagrams (`config.enableDgram`) but has no public API for them, so
// this reaches its internals: the native quiche connection (`connection.conn`: dgramSend,
// dgramRecvVec, ...), `connection.send()` to turn queued frames into UDP packets at once, and
// `connection.recv()`, wrapped to drain received datagrams after every UDP packet.
// Messages are segmented with the iSCP 8-byte header (proto/wire/datagram.ts). Sending never blocks: what does
// not fit quiche's send queue waits in a bounded backlog (oldest messages dropped beyond it).
import type { QUICConnection } from "@matrixai/quic";
import {
  ISCP_GO_MAX_DATAGRAM_BYTES,
  SEGMENT_HEADER_BYTES,
  segmentMessage,
  SegmentReassembler,
  SegmentSequence,
  type DatagramStats,
} from "../../wire/datagram.js";

const RECV_QUEUE = 1024;
const SEND_QUEUE = 2048;
/** Spread into the QUICServer / QUICClient config: advertises max_datagram_frame_size to the peer. */
export const QUIC_DATAGRAM_CONFIG = { enableDgram: [true, RECV_QUEUE, SEND_QUEUE] as [boolean, number, number] };

interface NativeConn {
  dgramSend(data: Uint8Array): void | null;
  dgramRecvVec(): Uint8Array | null;
  dgramSendQueueLen(): number;
  dgramMaxWritableLen(): number | null;
}
interface ConnInternals {
  conn: NativeConn;
  recv(data: Uint8Array, remoteInfo: unknown): Promise<void>;
  send(): Promise<void>;
}

export interface QuicDatagramOptions {
  /** Largest message accepted from the peer. */
  maxIncomingMessageBytes: number;
  /** Bytes of messages waiting for room in quiche's send queue; the oldest are dropped beyond it. */
  maxBacklogBytes?: number;
}

export class QuicDatagramChannel {
  private readonly internals: ConnInternals | undefined;
  private readonly seq = new SegmentSequence();
  private readonly reassembler: SegmentReassembler;
  private backlog: Uint8Array[][] = [];
  private backlogBytes = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private messageCb: ((m: Uint8Array) => void) | undefined;
  private drainCb: (() => void) | undefined;
  private readonly counts = { sentMessages: 0, sentDatagrams: 0, sendDropped: 0 };
  private readonly maxBacklogBytes: number;

  constructor(connection: QUICConnection, opts: QuicDatagramOptions) {
    this.reassembler = new SegmentReassembler({ maxMessageBytes: opts.maxIncomingMessageBytes });
    this.maxBacklogBytes = opts.maxBacklogBytes ?? 1024 * 1024;
    const c = connection as unknown as Partial<ConnInternals>;
    // Without the internals this library version was written against, datagrams are simply unavailable.
    if (
      !c.conn ||
      typeof c.conn.dgramSend !== "function" ||
      typeof c.recv !== "function" ||
      typeof c.send !== "function"
    )
      return;
    this.internals = c as ConnInternals;
    const recv = c.recv;
    const self = this;
    c.recv = async function (this: unknown, data: Uint8Array, remoteInfo: unknown) {
      try {
        await recv.call(connection, data, remoteInfo);
      } finally {
        self.drainReceived();
        self.pump();
      }
    };
  }

  /** Payload room per datagram, or 0 when the peer did not enable datagrams. */
  maxDatagramBytes(): number {
    if (!this.internals || this.closed) return 0;
    let n: number | null;
    try {
      n = this.internals.conn.dgramMaxWritableLen();
    } catch {
      return 0;
    }
    // iscp-go's size: its receivers (and IPv6 paths) are safe with it even where quiche offers more.
    return n !== null && n > SEGMENT_HEADER_BYTES ? Math.min(n, ISCP_GO_MAX_DATAGRAM_BYTES) : 0;
  }

  get available(): boolean {
    return this.maxDatagramBytes() > 0;
  }

  onMessage(cb: (m: Uint8Array) => void): void {
    this.messageCb = cb;
    this.drainReceived(); // datagrams that arrived before anyone listened
  }

  /** Fired when the backlog has emptied. */
  onDrain(cb: () => void): void {
    this.drainCb = cb;
  }

  /** Queues one message as datagrams; false when datagrams are unavailable (the caller uses the stream). */
  send(message: Uint8Array): boolean {
    const max = this.maxDatagramBytes();
    if (max === 0) return false;
    let segments: Uint8Array[];
    try {
      segments = segmentMessage(this.seq.take(), message, max);
    } catch {
      this.counts.sendDropped++;
      return true;
    }
    if (segments.length > SEND_QUEUE) {
      this.counts.sendDropped++;
      return true;
    }
    this.counts.sentMessages++;
    this.backlog.push(segments);
    this.backlogBytes += message.length;
    while (this.backlogBytes > this.maxBacklogBytes && this.backlog.length > 1) this.dropOldest();
    this.pump();
    return true;
  }

  pendingBytes(): number {
    return this.backlogBytes;
  }

  stats(): DatagramStats {
    return { ...this.reassembler.stats(), ...this.counts, backlogBytes: this.backlogBytes };
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.backlog = [];
    this.backlogBytes = 0;
    this.reassembler.clear();
  }

  /** Moves whole messages from the backlog into quiche's queue while it has room, then sends. */
  private pump(): void {
    const t = this.internals;
    if (!t || this.closed || this.backlog.length === 0) return;
    let moved = false;
    try {
      while (this.backlog.length > 0 && SEND_QUEUE - t.conn.dgramSendQueueLen() >= this.backlog[0]!.length) {
        const segments = this.backlog.shift()!;
        this.backlogBytes -= segments.reduce((n, s) => n + s.length - SEGMENT_HEADER_BYTES, 0);
        for (const s of segments) {
          if (t.conn.dgramSend(s) === null) break; // queue full after all: the rest of this message is lost
          this.counts.sentDatagrams++;
        }
        moved = true;
      }
    } catch {
      // Closed or draining connection: nothing more goes out.
      this.close();
      return;
    }
    if (moved) void t.send().catch(() => {});
    if (this.backlog.length > 0) {
      // Room comes back as packets leave (after ACKs, i.e. after a recv); retry soon in case none comes.
      if (!this.retryTimer)
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.pump();
        }, 5);
    } else if (moved) {
      this.drainCb?.();
    }
  }

  private dropOldest(): void {
    const segments = this.backlog.shift()!;
    this.backlogBytes -= segments.reduce((n, s) => n + s.length - SEGMENT_HEADER_BYTES, 0);
    this.counts.sendDropped++;
  }

  private drainReceived(): void {
    const t = this.internals;
    if (!t || this.closed || !this.messageCb) return; // unread ones wait in quiche's bounded queue
    for (;;) {
      let d: Uint8Array | null;
      try {
        d = t.conn.dgramRecvVec();
      } catch {
        return;
      }
      if (d === null) return;
      const m = this.reassembler.push(d);
      if (!m) continue;
      try {
        this.messageCb(m);
      } catch {
        // A handler error must not become a rejection inside the library's UDP receive path.
      }
    }
  }
}
