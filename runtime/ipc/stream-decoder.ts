// Base of the FIFO frame decoders. Whole frames are decoded in place in the read buffer; the bytes of a
// frame that spans reads are copied into one assembly buffer the decoder keeps and reuses (only as many as
// the frame needs), so a stream of frames larger than a read costs no allocation per frame or per read.
// Payloads are views into those buffers: valid until the next push (the reader's batch contract).
import type { DataPoint } from "../datapoint.js";
import {
  type ClockBase,
  type DecoderOptions,
  type DecoderStats,
  type FrameDecoder,
  DEFAULT_MAX_PAYLOAD,
  NO_CLOCK_BASE,
  emptyStats,
} from "./codec.js";

/** An assembly buffer above this size shrinks after QUIET_READS reads that needed at most a quarter of it. */
const LARGE_ASSEMBLY = 1024 * 1024;
const QUIET_READS = 1024;

export abstract class StreamDecoder implements FrameDecoder {
  readonly stats: DecoderStats = emptyStats();
  protected clockBase: ClockBase;
  protected readonly srcId: string;
  protected readonly maxPayload: number;
  /** True while skipping garbage: the whole run counts as one corrupt region. */
  protected inGarbage = false;
  /** Bytes the next frame needs in total, from the start of the kept bytes (set by parse). */
  protected need = 0;
  /** Bytes of a frame that spans reads: asm[asmStart, asmEnd). */
  private asm: Buffer = Buffer.allocUnsafe(0);
  private asmStart = 0;
  private asmEnd = 0;
  /** Reads in a row that needed at most a quarter of a large assembly buffer: past QUIET_READS it shrinks. */
  private quietReads = 0;

  constructor(opts: DecoderOptions) {
    this.srcId = opts.srcId;
    this.clockBase = opts.clockBase ?? NO_CLOCK_BASE;
    this.maxPayload = opts.maxPayload ?? DEFAULT_MAX_PAYLOAD;
  }

  setClockBase(base: ClockBase): void {
    this.clockBase = base;
  }

  /** Decodes what `chunk` completes; the points' payloads may view `chunk` or the assembly buffer until the next push. */
  push(chunk: Buffer, out: DataPoint[]): void {
    if (chunk.length === 0) return;
    // The previous batch is consumed: the kept bytes move to the front, reusing the buffer.
    if (this.asmStart > 0) {
      this.asm.copyWithin(0, this.asmStart, this.asmEnd);
      this.asmEnd -= this.asmStart;
      this.asmStart = 0;
    }
    // One huge frame must not pin its buffer for good; a steady stream of large frames keeps resetting the count.
    if (this.asm.length > LARGE_ASSEMBLY && this.asmEnd <= this.asm.length / 4 && ++this.quietReads > QUIET_READS) {
      const kept = this.asm.subarray(0, this.asmEnd);
      this.asm = Buffer.allocUnsafe(Math.max(2 * this.asmEnd, 64 * 1024));
      kept.copy(this.asm);
      this.quietReads = 0;
    }
    let off = 0;
    while (this.asmEnd > this.asmStart) {
      const have = this.asmEnd - this.asmStart;
      if (have < this.need) {
        const take = Math.min(this.need - have, chunk.length - off);
        this.keep(chunk, off, off + take);
        off += take;
        if (this.asmEnd - this.asmStart < this.need) return; // the read ended inside the frame
      }
      this.need = 0;
      this.asmStart += this.parse(this.asm.subarray(this.asmStart, this.asmEnd), out);
      const left = this.asmEnd - this.asmStart;
      if (left > 0 && this.need <= left) this.need = left + 1;
      if (left > 0 && off === chunk.length) return;
    }
    // Kept bytes are appended after asmEnd: a frame decoded from the buffer in this push stays intact.
    if (off === chunk.length) return;
    this.need = 0;
    const rest = chunk.subarray(off);
    const used = this.parse(rest, out);
    if (used < rest.length) {
      this.keep(rest, used, rest.length);
      if (this.need <= rest.length - used) this.need = rest.length - used + 1;
    }
  }

  /** Appends src[from, to) to the kept bytes; a larger buffer is a new one (views of the old stay intact). */
  private keep(src: Buffer, from: number, to: number): void {
    const len = to - from;
    if (this.asmEnd + len > this.asm.length) {
      const have = this.asmEnd - this.asmStart;
      const next = Buffer.allocUnsafe(Math.max(have + len, 2 * this.asm.length, 4096));
      this.asm.copy(next, 0, this.asmStart, this.asmEnd);
      this.asm = next;
      this.asmStart = 0;
      this.asmEnd = have;
    }
    this.asmEnd += src.copy(this.asm, this.asmEnd, from, to);
    if (this.asmEnd - this.asmStart > this.asm.length / 4) this.quietReads = 0;
  }

  /** Bytes the assembly buffer holds on to (its capacity). */
  get assemblyBytes(): number {
    return this.asm.length;
  }

  end(): void {
    if (this.asmEnd > this.asmStart && !this.inGarbage) this.stats.truncated++;
    this.asmStart = this.asmEnd = 0;
    this.need = 0;
    this.inGarbage = false;
  }

  /** Skips one byte of garbage at a position where no valid frame starts. */
  protected skip(): void {
    if (!this.inGarbage) {
      this.inGarbage = true;
      this.stats.corrupt++;
    }
    this.stats.skippedBytes++;
  }

  /**
   * Decodes whole frames from buf, returns the bytes consumed; when it stops at an incomplete frame it sets
   * `need` to that frame's total length (or the header length when even the header is incomplete).
   */
  protected abstract parse(buf: Buffer, out: DataPoint[]): number;
}

/** Data types are short printable ASCII (`float64`, `h264_frame/idr_frame`). */
export function validTypeBytes(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i]!;
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

/** Data names are UTF-8 without control characters. */
export function validNameBytes(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i]!;
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
}
