// Per-message DEFLATE as the published iSCP clients do it: every message is one complete raw DEFLATE stream (final
// block included, no zlib header, no trailer to strip). "Context takeover" is not one long stream: each message's
// stream starts afresh with the last 2^cwinbits bytes of the earlier messages (uncompressed, this direction) as
// its preset dictionary (aptpod/iscp-go transport/websocket/transport.go, iscp-rs src/transport/compression.rs).
// DEFLATE cannot reach back further than 32 KiB, so a larger window keeps only that much; cwinbits 0 keeps one byte,
// as iscp-go does (2^0).
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

const historyFor = (p: CompressionParams, cap: number) =>
  p.contextTakeover ? new History(Math.min(2 ** p.windowBits, cap)) : undefined;

/** Compresses one direction's messages. */
export class MessageDeflater {
  private readonly history: History | undefined;
  private readonly windowBits: number;

  constructor(private readonly params: CompressionParams) {
    // iscp-rs inflates with a window of exactly cwinbits (9..15): never reach further back than that.
    this.windowBits = params.contextTakeover ? Math.max(9, Math.min(15, params.windowBits)) : 15;
    this.history = historyFor(params, 2 ** this.windowBits);
  }

  deflate(msg: Uint8Array): Buffer {
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

  constructor(
    params: CompressionParams,
    private readonly maxMessageBytes: number,
  ) {
    this.history = historyFor(params, MAX_DISTANCE);
  }

  inflate(bytes: Uint8Array): Buffer {
    // iscp-rs sends an empty frame for an empty message.
    if (bytes.length === 0) return EMPTY;
    const dictionary = this.history?.dictionary;
    const out = zlib.inflateRawSync(bytes, {
      maxOutputLength: this.maxMessageBytes,
      ...(dictionary && dictionary.length > 0 ? { dictionary } : {}),
    });
    this.history?.push(out);
    return out;
  }
}
