// Shared shapes of the FIFO frame codecs (iscp-v2-compat, logger-msg).
import type { DataPoint } from "../datapoint.js";

export interface DecoderStats {
  /** Frames decoded into points. */
  frames: number;
  /** Corrupt regions met: each run of bytes skipped while resynchronising counts once. */
  corrupt: number;
  /** Bytes skipped while resynchronising. */
  skippedBytes: number;
  /** Partial frames discarded because the writer closed the FIFO mid-frame. */
  truncated: number;
  /** Well-formed frames dropped because the (prefixed) data name breaks the data-name rules. */
  invalidNames: number;
}

/**
 * Device clock reading (seconds, nanoseconds) that corresponds to the measurement base time:
 * upstream frames carry device clock readings and elapsed = reading - clockBase.
 * {sec: 0, nsec: 0} makes frame timestamps elapsed times verbatim.
 */
export interface ClockBase {
  sec: number;
  nsec: number;
}

export interface DecoderOptions {
  /** Source id stamped on every point (the IPC channel id). */
  srcId: string;
  /** Prepended to every data name (the IPC `data_name_prefix`). */
  namePrefix?: string;
  clockBase?: ClockBase;
  /** Frames with a larger payload are treated as corrupt (default 16 MiB). */
  maxPayload?: number;
}

export interface FrameDecoder {
  /** Decodes as many whole frames as `chunk` (plus bytes kept from earlier) holds, appending to `out`. */
  push(chunk: Buffer, out: DataPoint[]): void;
  /** The writer closed the FIFO: a partial frame left over is discarded and counted. */
  end(): void;
  setClockBase(base: ClockBase): void;
  readonly stats: DecoderStats;
}

export interface EncodeResult {
  buffer: Buffer;
  frames: number;
  /** Points not encodable in this format (e.g. a type logger-msg has no DType for). */
  unsupported: number;
}

export interface FrameEncoder {
  /**
   * Encodes the points whose name starts with `stripPrefix`, removing the prefix from the name.
   * Timestamps are elapsed times (seconds, nanoseconds).
   */
  encode(points: readonly DataPoint[], stripPrefix?: string): EncodeResult;
}

export const DEFAULT_MAX_PAYLOAD = 16 * 1024 * 1024;
export const NO_CLOCK_BASE: ClockBase = { sec: 0, nsec: 0 };

export function emptyStats(): DecoderStats {
  return { frames: 0, corrupt: 0, skippedBytes: 0, truncated: 0, invalidNames: 0 };
}

/** Elapsed ns from a (sec, nsec) reading; computed on differences to stay exact for large readings. */
export function elapsedFrom(sec: number, nsec: number, base: ClockBase): number {
  return (sec - base.sec) * 1e9 + (nsec - base.nsec);
}

/** (sec, nsec) for a non-negative elapsed time; negative elapsed times are written as 0. */
export function elapsedToParts(ns: number): [number, number] {
  if (!(ns > 0)) return [0, 0];
  const sec = Math.floor(ns / 1e9);
  return [sec >>> 0, ns - sec * 1e9];
}
