// Per-message DEFLATE as the published iSCP clients do it: every message is one complete raw DEFLATE stream (final
// block included, no zlib header, no trailer to strip). "Context takeover" is not one long stream: each message's
// stream starts afresh with the last 2^cwinbits bytes of the earlier messages (uncompressed, this direction) as
// its preset dictionary (aptpod/iscp-go transport/websocket/transport.go, iscp-rs src/transport/compression.rs).
// DEFLATE cannot reach back further than 32 KiB, so a larger window keeps only that much; cwinbits 0 keeps one byte,
// as iscp-go does (2^0). iscp-go before 1.1.0 frames each QUIC message as a zlib stream (RFC 1950: 2-byte header,
// Adler-32 trailer) instead: the inflater recognises the header, and the deflater answers a connection that uses it
// in the same framing (`zlibFramed`).
import zlib from "node:zlib";
import type { CompressionParams } from "./negotiation.js";

const MAX_DISTANCE = 32 * 1024;
const EMPTY = Buffer.alloc(0);

/** The last `size` bytes of what a direction carried so far. */
class History {
  private bytes: Buffer = EMPTY;
  constructor(readonly size: number) {}

  get dictionary(): Buffer {
    return this.bytes;
  }

  push(msg: Uint8Array): void {
    if (msg.length >= this.size) {
      this.bytes = Buffer.from(msg.subarray(msg.length - this.size));
      return;
    }
    const keep = Math.min(this.bytes.length, this.size - msg.length);
    this.bytes = Buffer.concat([this.bytes.subarray(this.bytes.length - keep), msg]);
  }
}

/**
 * Whether a message starts with a zlib header (CM 8, a window of at most 32 KiB, no preset dictionary, FCHECK).
 * A raw DEFLATE stream cannot look like this: its first byte would open a stored block padded with a 1 bit, which
 * no encoder writes.
 */
export function isZlibFramed(b: Uint8Array): boolean {
  if (b.length < 2) return false;
  const cmf = b[0]!;
  const flg = b[1]!;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && (flg & 0x20) === 0 && ((cmf << 8) | flg) % 31 === 0;
}

const historyFor = (p: CompressionParams, cap: number) =>
  p.contextTakeover ? new History(Math.min(2 ** p.windowBits, cap)) : undefined;

/** Compresses one direction's messages. */
export class MessageDeflater {
  private readonly history: History | undefined;
  private readonly windowBits: number;
  /** Compress as zlib streams (iscp-go before 1.1.0 on QUIC); set once the peer's messages came so framed. */
  zlibFramed = false;

  constructor(private readonly params: CompressionParams) {
    // iscp-rs inflates with a window of exactly cwinbits (9..15): never reach further back than that.
    this.windowBits = params.contextTakeover ? Math.max(9, Math.min(15, params.windowBits)) : 15;
    this.history = historyFor(params, 2 ** this.windowBits);
  }

  deflate(msg: Uint8Array): Buffer {
    if (this.zlibFramed && !this.history) return zlib.deflateSync(msg, { level: this.params.level });
    const dictionary = this.history?.dictionary;
    const out = zlib.deflateRawSync(msg, {
      level: this.params.level,
      windowBits: this.windowBits,
      ...(dictionary && dictionary.length > 0 ? { dictionary } : {}),
    });
    this.history?.push(msg);
    return out;
  }
}

/** Decompresses the peer's messages of one direction; throws on a stream that is not valid or too large. */
export class MessageInflater {
  private readonly history: History | undefined;
  /** The peer frames its messages as zlib streams (iscp-go before 1.1.0 on QUIC; never with context takeover). */
  zlibFramed = false;

  constructor(
    params: CompressionParams,
    private readonly maxMessageBytes: number,
  ) {
    this.history = historyFor(params, MAX_DISTANCE);
  }

  inflate(bytes: Uint8Array): Buffer {
    // iscp-rs sends an empty frame for an empty message.
    if (bytes.length === 0) return EMPTY;
    if (!this.history && isZlibFramed(bytes)) {
      this.zlibFramed = true;
      return zlib.inflateSync(bytes, { maxOutputLength: this.maxMessageBytes });
    }
    const dictionary = this.history?.dictionary;
    const out = zlib.inflateRawSync(bytes, {
      maxOutputLength: this.maxMessageBytes,
      ...(dictionary && dictionary.length > 0 ? { dictionary } : {}),
    });
    this.history?.push(out);
    return out;
  }
}
