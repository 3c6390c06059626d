// iSCP datagram segmentation (QUIC and WebTransport DATAGRAM frames; aptpod/iscp-go
// internal/segment, iscp-rs src/transport/datagram.rs). Each datagram is
// `u32be messageSeq | u16be maxSegmentIndex | u16be segmentIndex | payload`; a message is cut into
// maxSegmentIndex+1 segments and rebuilt once all of them arrived, concatenated in index order.
// Pure byte codec: no transport, no timers (the reassembler is handed the clock).

export const SEGMENT_HEADER_BYTES = 8;
/** iscp-go's datagram size (1188 payload bytes): fits the 1200-byte minimum QUIC packet. */
export const ISCP_GO_MAX_DATAGRAM_BYTES = 1196;
const MAX_SEGMENTS = 0x10000;

export interface SegmentHeader {
  messageSeq: number;
  maxSegmentIndex: number;
  segmentIndex: number;
}

export function encodeSegment(h: SegmentHeader, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(SEGMENT_HEADER_BYTES + payload.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, h.messageSeq >>> 0);
  v.setUint16(4, h.maxSegmentIndex);
  v.setUint16(6, h.segmentIndex);
  out.set(payload, SEGMENT_HEADER_BYTES);
  return out;
}

/** Header and payload of one datagram, or undefined when it is too short or inconsistent. */
export function decodeSegment(d: Uint8Array): { header: SegmentHeader; payload: Uint8Array } | undefined {
  if (d.length < SEGMENT_HEADER_BYTES) return undefined;
  const v = new DataView(d.buffer, d.byteOffset, d.byteLength);
  const header = { messageSeq: v.getUint32(0), maxSegmentIndex: v.getUint16(4), segmentIndex: v.getUint16(6) };
  if (header.segmentIndex > header.maxSegmentIndex) return undefined;
  return { header, payload: d.subarray(SEGMENT_HEADER_BYTES) };
}

/**
 * Cuts one encoded message into datagrams of at most `maxDatagramBytes` (header included).
 * Like iscp-rs, an exact multiple of the segment size gives no empty trailing segment.
 * Throws when the message needs more than 65 536 segments.
 */
export function segmentMessage(messageSeq: number, message: Uint8Array, maxDatagramBytes: number): Uint8Array[] {
  const size = maxDatagramBytes - SEGMENT_HEADER_BYTES;
  if (size < 1) throw new Error(`datagram size ${maxDatagramBytes} leaves no room for a payload`);
  const count = Math.max(1, Math.ceil(message.length / size));
  if (count > MAX_SEGMENTS)
    throw new Error(`message of ${message.length} bytes needs ${count} datagrams (at most ${MAX_SEGMENTS})`);
  const out: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    out.push(
      encodeSegment(
        { messageSeq, maxSegmentIndex: count - 1, segmentIndex: i },
        message.subarray(i * size, (i + 1) * size),
      ),
    );
  }
  return out;
}

/** Per-sender message sequence: u32 from 0, wrapping (iscp-go, iscp-rs and iscp-ts all start at 0). */
export class SegmentSequence {
  private next = 0;
  take(): number {
    const s = this.next;
    this.next = (this.next + 1) >>> 0;
    return s;
  }
}

export interface ReassemblerOptions {
  /** A rebuilt message may not exceed this; larger sets are dropped as soon as they grow past it. */
  maxMessageBytes: number;
  /** Bytes held in incomplete sets; the oldest sets are evicted beyond it. */
  maxPendingBytes?: number;
  /** Incomplete sets held at once; the oldest are evicted beyond it. */
  maxPendingMessages?: number;
  /** An incomplete set is dropped this long after its last segment arrived (iscp-go and iscp-ts: 10 s). */
  expiryMs?: number;
  now?: () => number;
}

export interface ReassemblerStats {
  datagrams: number;
  messages: number;
  malformed: number;
  duplicates: number;
  /** Incomplete sets given up: expired, evicted by the bounds, or grown past maxMessageBytes. */
  dropped: number;
  pendingMessages: number;
  pendingBytes: number;
}

/** Both directions of one datagram path (reassembly counters plus the send side). */
export interface DatagramStats extends ReassemblerStats {
  sentMessages: number;
  sentDatagrams: number;
  /** Messages given up on the send side: backlog overflow, too many segments, quiche refusal. */
  sendDropped: number;
  backlogBytes: number;
}

interface PendingSet {
  maxSegmentIndex: number;
  parts: Map<number, Uint8Array>;
  bytes: number;
  lastAt: number;
}

/** Collects segments by messageSeq; memory is bounded by message count, bytes and age. */
export class SegmentReassembler {
  private readonly sets = new Map<number, PendingSet>();
  private pendingBytes = 0;
  private lastPrune = 0;
  private readonly maxPendingBytes: number;
  private readonly maxPendingMessages: number;
  private readonly expiryMs: number;
  private readonly now: () => number;
  private readonly counts = { datagrams: 0, messages: 0, malformed: 0, duplicates: 0, dropped: 0 };

  constructor(private readonly opts: ReassemblerOptions) {
    this.maxPendingBytes = opts.maxPendingBytes ?? Math.max(opts.maxMessageBytes, 4 * 1024 * 1024);
    this.maxPendingMessages = opts.maxPendingMessages ?? 256;
    this.expiryMs = opts.expiryMs ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /** Feeds one datagram; returns the rebuilt message when this segment completed one. Never throws. */
  push(datagram: Uint8Array): Uint8Array | undefined {
    this.counts.datagrams++;
    const now = this.now();
    if (now - this.lastPrune >= Math.min(1000, this.expiryMs)) this.prune(now);
    const seg = decodeSegment(datagram);
    if (!seg) {
      this.counts.malformed++;
      return undefined;
    }
    const { messageSeq, maxSegmentIndex, segmentIndex } = seg.header;
    if (maxSegmentIndex === 0) return this.complete(seg.payload);
    let set = this.sets.get(messageSeq);
    if (set && set.maxSegmentIndex !== maxSegmentIndex) {
      this.counts.malformed++;
      return undefined;
    }
    if (!set) {
      set = { maxSegmentIndex, parts: new Map(), bytes: 0, lastAt: now };
      this.sets.set(messageSeq, set);
    }
    if (set.parts.has(segmentIndex)) {
      this.counts.duplicates++;
      return undefined;
    }
    // Copy: the caller's buffer may be reused (quiche hands out fresh ones, tests may not).
    set.parts.set(segmentIndex, seg.payload.slice());
    set.bytes += seg.payload.length;
    set.lastAt = now;
    this.pendingBytes += seg.payload.length;
    if (set.bytes > this.opts.maxMessageBytes) {
      this.drop(messageSeq, set);
      return undefined;
    }
    if (set.parts.size === maxSegmentIndex + 1) {
      this.forget(messageSeq, set);
      const out = new Uint8Array(set.bytes);
      let off = 0;
      for (let i = 0; i <= maxSegmentIndex; i++) {
        const p = set.parts.get(i)!;
        out.set(p, off);
        off += p.length;
      }
      return this.complete(out);
    }
    // Oldest first (Map order is first arrival): evict until within bounds, never the set just fed.
    while (this.sets.size > this.maxPendingMessages || this.pendingBytes > this.maxPendingBytes) {
      const [seq, oldest] = this.sets.entries().next().value!;
      this.drop(seq, oldest);
      if (oldest === set) break;
    }
    return undefined;
  }

  /** Drops incomplete sets whose last segment is older than the expiry. */
  prune(now = this.now()): void {
    this.lastPrune = now;
    for (const [seq, set] of this.sets) if (now - set.lastAt > this.expiryMs) this.drop(seq, set);
  }

  clear(): void {
    this.sets.clear();
    this.pendingBytes = 0;
  }

  stats(): ReassemblerStats {
    return { ...this.counts, pendingMessages: this.sets.size, pendingBytes: this.pendingBytes };
  }

  private complete(message: Uint8Array): Uint8Array | undefined {
    if (message.length > this.opts.maxMessageBytes) {
      this.counts.dropped++;
      return undefined;
    }
    this.counts.messages++;
    return message;
  }

  private forget(seq: number, set: PendingSet): void {
    this.sets.delete(seq);
    this.pendingBytes -= set.bytes;
  }

  private drop(seq: number, set: PendingSet): void {
    this.forget(seq, set);
    this.counts.dropped++;
  }
}
