// Base of the FIFO frame decoders: keeps the bytes of a partial frame between reads, without
// re-concatenating on every read (chunks are collected until the frame's known length is there).
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

export abstract class StreamDecoder implements FrameDecoder {
  readonly stats: DecoderStats = emptyStats();
  protected clockBase: ClockBase;
  protected readonly srcId: string;
  protected readonly maxPayload: number;
  /** True while skipping garbage: the whole run counts as one corrupt region. */
  protected inGarbage = false;
  /** Bytes the next frame needs in total, from the start of the kept bytes (set by parse). */
  protected need = 0;
  private pending: Buffer[] = [];
  private pendingLen = 0;

  constructor(opts: DecoderOptions) {
    this.srcId = opts.srcId;
    this.clockBase = opts.clockBase ?? NO_CLOCK_BASE;
    this.maxPayload = opts.maxPayload ?? DEFAULT_MAX_PAYLOAD;
  }

  setClockBase(base: ClockBase): void {
    this.clockBase = base;
  }

  push(chunk: Buffer, out: DataPoint[]): void {
    if (chunk.length === 0) return;
    if (this.pendingLen > 0) {
      this.pending.push(chunk);
      this.pendingLen += chunk.length;
      if (this.pendingLen < this.need) return;
      chunk = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingLen);
      this.pending = [];
      this.pendingLen = 0;
    }
    this.need = 0;
    const used = this.parse(chunk, out);
    if (used < chunk.length) {
      const rest = chunk.subarray(used);
      this.pending = [rest];
      this.pendingLen = rest.length;
      if (this.need <= rest.length) this.need = rest.length + 1;
    }
  }

  end(): void {
    if (this.pendingLen > 0 && !this.inGarbage) this.stats.truncated++;
    this.pending = [];
    this.pendingLen = 0;
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
