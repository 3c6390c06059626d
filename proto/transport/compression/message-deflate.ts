// Per-message DEFLATE as the published iSCP clients do it: every message is one complete raw DEFLATE stream (final
// block included, no zlib header, no trailer to strip). "Context takeover" is not one long stream: each message's
// stream starts afresh with the last 2^cwinbits bytes of the earlier messages (uncompressed, this direction) as
// its preset dictionary (aptpod/iscp-go transport/websocket/transport.go, iscp-rs src/transport/compression.rs).
// DEFLATE cannot reach back further than 32 KiB, so a larger window keeps only that much; cwinbits 0 keeps one byte,
// as iscp-go does (2^0). iscp-go before 1.1.0 frames each QUIC message as a zlib stream (RFC 1950: 2-byte header,
// Adler-32 trailer) instead: the inflater recognises the header, and the deflater answers a connection that uses it
// in the same framing (`zlibFramed`). iscp-go before 1.1.0 also keeps another context (context-window.ts): where an
// inflater is given a way to check a message (`validate`), it finds out which context the peer keeps from the first
// messages after the two differ, and the deflater sends without a context until then, which either kind reads.
import zlib from "node:zlib";
import { DirectionContext, type ContextKind } from "./context-window.js";
import type { CompressionParams } from "./negotiation.js";

const MAX_DISTANCE = 32 * 1024;
const EMPTY = Buffer.alloc(0);

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

const contextFor = (p: CompressionParams, cap: number, both: boolean) =>
  p.contextTakeover ? new DirectionContext(2 ** p.windowBits, cap, both) : undefined;

/** Messages whose two decompressions both check out but differ, after which the peer is taken to keep the last bytes. */
const SETTLE_AFTER = 64;

/** Compresses one direction's messages. */
export class MessageDeflater {
  private readonly history: DirectionContext | undefined;
  private readonly windowBits: number;
  /** Compress as zlib streams (iscp-go before 1.1.0 on QUIC); set once the peer's messages came so framed. */
  zlibFramed = false;
  /** The context the peer keeps; undefined while it is not known (`peerUnknown`), set from the peer's inflater. */
  peerContext: ContextKind | undefined = "last";

  constructor(
    private readonly params: CompressionParams,
    peerUnknown = false,
  ) {
    // iscp-rs inflates with a window of exactly cwinbits (9..15): never reach further back than that.
    this.windowBits = params.contextTakeover ? Math.max(9, Math.min(15, params.windowBits)) : 15;
    this.history = contextFor(params, 2 ** this.windowBits, peerUnknown);
    if (peerUnknown) this.peerContext = undefined;
  }

  deflate(msg: Uint8Array): Buffer {
    if (this.zlibFramed && !this.history) return zlib.deflateSync(msg, { level: this.params.level });
    const h = this.history;
    // Past the point where the two contexts differ, and the peer's not known: no context, which both read alike.
    const dictionary =
      h && (this.peerContext ? h.dictionary(this.peerContext) : h.diverged ? undefined : h.dictionary("last"));
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
  private readonly history: DirectionContext | undefined;
  /** The peer frames its messages as zlib streams (iscp-go before 1.1.0 on QUIC; never with context takeover). */
  zlibFramed = false;
  /** The context the peer keeps: the last bytes, or, with `validate`, undefined until its messages show it. */
  peerContext: ContextKind | undefined = "last";
  private ambiguous = 0;

  /** `validate`: whether decompressed bytes are a message; given, the peer's context is found out (see top). */
  constructor(
    params: CompressionParams,
    private readonly maxMessageBytes: number,
    private readonly validate?: (plain: Buffer) => boolean,
  ) {
    this.history = contextFor(params, MAX_DISTANCE, validate !== undefined);
    if (validate) this.peerContext = undefined;
  }

  inflate(bytes: Uint8Array): Buffer {
    // iscp-rs sends an empty frame for an empty message.
    if (bytes.length === 0) return EMPTY;
    if (!this.history && isZlibFramed(bytes)) {
      this.zlibFramed = true;
      return zlib.inflateSync(bytes, { maxOutputLength: this.maxMessageBytes });
    }
    const h = this.history;
    const out =
      h && !this.peerContext && h.diverged
        ? this.settle(bytes, h)
        : this.inflateWith(bytes, h?.dictionary(this.peerContext ?? "last"));
    h?.push(out);
    return out;
  }

  private inflateWith(bytes: Uint8Array, dictionary: Buffer | undefined): Buffer {
    return zlib.inflateRawSync(bytes, {
      maxOutputLength: this.maxMessageBytes,
      ...(dictionary && dictionary.length > 0 ? { dictionary } : {}),
    });
  }

  /**
   * Decompresses with both contexts (where the message refers back before its start): the one whose result is a
   * message is the peer's (a message taken with the
   * wrong context often fails to decode; with the right one it never does). While both decode and differ, the last
   * bytes are taken (the protocol as the clients now have it), and after SETTLE_AFTER such messages for good.
   */
  private settle(bytes: Uint8Array, h: DirectionContext): Buffer {
    // A message that refers to nothing before it reads the same with either context (and tells nothing).
    try {
      return this.inflateWith(bytes, undefined);
    } catch {}
    const attempt = (kind: ContextKind) => {
      try {
        const plain = this.inflateWith(bytes, h.dictionary(kind));
        return this.validate!(plain) ? plain : undefined;
      } catch {
        return undefined;
      }
    };
    const last = attempt("last");
    const first = attempt("first");
    if (!last && !first) throw new Error("the message is no iSCP message with either context");
    if (!last) {
      this.peerContext = "first";
      return first!;
    }
    if (!first || (!first.equals(last) && ++this.ambiguous >= SETTLE_AFTER)) this.peerContext = "last";
    return last;
  }
}
