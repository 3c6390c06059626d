// What the connection layers (the broker's and the agent's iSCP connections) need from a transport:
// whole encoded iSCP messages in and out, plus a byte count for backpressure. WebSocket and QUIC
// implement it on each side; framing details stay inside the transports.
import type { DatagramStats } from "../wire/datagram.js";
import type { Encoding } from "../wire/message.js";
import { takeFront } from "./chunk-list.js";

export type TransportKind = "websocket" | "quic";

export interface MessageTransport {
  readonly kind: TransportKind;
  /** The negotiated message encoding (WebSocket `enc` query / QUIC negotiation stream). */
  readonly encoding: Encoding;
  /**
   * Sends one encoded message. Never throws; a dead transport drops it and reports close. `written`, where a
   * transport supports it, is called once the frame's bytes are no longer needed (handed to the OS, or
   * dropped), so the caller may reuse them; a transport may also never call it.
   */
  send(frame: Uint8Array, written?: () => void): void;
  /**
   * Sends one encoded message on the unreliable path (QUIC DATAGRAMs with the iSCP segment header),
   * where it may be lost. Transports without one (WebSocket, a QUIC peer without datagrams) use send().
   */
  sendUnreliable(frame: Uint8Array, written?: () => void): void;
  /** Bytes passed to send()/sendUnreliable() that the transport has not yet handed to the OS. */
  bufferedBytes(): number;
  /** `unreliable` is true for a message that arrived on the unreliable path. */
  onMessage(cb: (frame: Uint8Array, unreliable?: boolean) => void): void;
  /** Stop / restart reading the peer's input (backpressure); absent where the transport cannot. */
  pauseInput?(): void;
  resumeInput?(): void;
  /** Datagram counters; absent on transports without an unreliable path. */
  datagramStats?(): DatagramStats;
  /** Runs `fn` with the transport's writes held, then writes what it sent at once (one syscall); absent where it cannot. */
  corked?(fn: () => void): void;
  /** Fired when bufferedBytes() falls back below the transport's low-water mark. */
  onDrain(cb: () => void): void;
  /** Fired once, when the transport is gone for whatever reason. */
  onClose(cb: (reason: string) => void): void;
  /** Graceful close after queued frames. */
  close(): void;
  /** Abrupt close (dead peer, tests). */
  terminate(): void;
}

// ---- QUIC framing (aptpod/iscp-go transport/quic, iscp-rs src/transport/quic.rs) ----

/** Negotiation stream body: repeated `u16be keyLen, key, u16be valLen, value`. */
export function encodeNegotiation(params: Record<string, string>): Uint8Array {
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(params)) {
    const kb = Buffer.from(k, "utf8");
    const vb = Buffer.from(v, "utf8");
    const head = Buffer.alloc(2);
    head.writeUInt16BE(kb.length);
    const vhead = Buffer.alloc(2);
    vhead.writeUInt16BE(vb.length);
    parts.push(head, kb, vhead, vb);
  }
  return new Uint8Array(Buffer.concat(parts));
}

export function decodeNegotiation(bytes: Uint8Array): Record<string, string> {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Record<string, string> = {};
  let off = 0;
  const readField = (): string => {
    if (off + 2 > b.length) throw new Error("truncated negotiation stream");
    const len = b.readUInt16BE(off);
    off += 2;
    if (off + len > b.length) throw new Error("truncated negotiation stream");
    const s = b.toString("utf8", off, off + len);
    off += len;
    return s;
  };
  while (off < b.length) {
    const k = readField();
    const v = readField();
    if (k === "" || k in out) throw new Error(`bad negotiation key ${JSON.stringify(k)}`);
    out[k] = v;
  }
  return out;
}

/** `u32be length, message` framing used on QUIC and WebTransport streams. */
export function lengthPrefixed(frame: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + frame.length);
  new DataView(out.buffer).setUint32(0, frame.length);
  out.set(frame, 4);
  return out;
}

/**
 * Reassembles length-prefixed messages from arbitrary stream chunks. Chunks are kept as they are until a message is
 * complete and copied once then (a message within one chunk is a view of it, not a copy), so a message of n bytes
 * costs O(n) however finely the stream splits it. Pushed chunks must not be reused by the caller.
 */
export class LengthPrefixedReader {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  /** Length of the message whose header was read, or -1 while waiting for a header. */
  private need = -1;
  constructor(private readonly maxMessageBytes: number) {}

  /** Returns the complete messages; throws when a declared length exceeds the limit. */
  push(chunk: Uint8Array): Uint8Array[] {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const out: Uint8Array[] = [];
    for (;;) {
      if (this.need < 0) {
        if (this.buffered < 4) break;
        const head = this.take(4);
        const len = new DataView(head.buffer, head.byteOffset, 4).getUint32(0);
        if (len > this.maxMessageBytes) throw new Error(`message of ${len} bytes exceeds ${this.maxMessageBytes}`);
        this.need = len;
      }
      if (this.buffered < this.need) break;
      out.push(this.take(this.need));
      this.need = -1;
    }
    return out;
  }

  /** The next n buffered bytes (n <= buffered): a view when the first chunk holds them, else one copy. */
  private take(n: number): Uint8Array {
    if (n === 0) return new Uint8Array(0);
    this.buffered -= n;
    const first = this.chunks[0]!;
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = new Uint8Array(n);
    takeFront(this.chunks, out);
    return out;
  }
}
