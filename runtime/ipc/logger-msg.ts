// FIFO format `logger-msg` (the format of the former intdash Edge Agent). Frame:
//   u8 type (0x01) | u24le length (bytes after this field) | u32le sec | u32le nsec | u8 DType | u8 Seq | body
// The body's meaning depends on the DType (logger-msg-dtypes.ts). Resynchronisation: a frame is accepted
// only when type is 0x01, length >= 10 and fits maxPayload, nsec < 1e9, Seq is 0 and a known
// DType's body parses.
import type { DataPoint } from "../datapoint.js";
import { type DecoderOptions, type EncodeResult, type FrameEncoder, elapsedFrom, elapsedToParts } from "./codec.js";
import { UNKNOWN_DTYPE_NAME_PREFIX, UNKNOWN_DTYPE_TYPE, byDType, byIscpType } from "./logger-msg-dtypes.js";
import { dataNameError } from "../filters/pattern.js";
import { StreamDecoder } from "./stream-decoder.js";

export const LOGGER_MSG_TYPE_DATA = 0x01;
const HEAD = 4; // type + length
const FIXED = 10; // sec + nsec + dtype + seq

export interface LoggerMsgDecoderOptions extends DecoderOptions {
  /** Called once per unknown DType (the first time it is seen). */
  onUnknownDType?: (dtype: number) => void;
}

export class LoggerMsgDecoder extends StreamDecoder {
  private readonly prefix: string;
  private readonly unknownSeen = new Set<number>();
  /** Validity of recently seen names (bounded), so the data-name rules are checked once per name. */
  private readonly names = new Map<string, boolean>();
  private readonly onUnknown: ((dtype: number) => void) | undefined;

  constructor(opts: LoggerMsgDecoderOptions) {
    super(opts);
    this.prefix = opts.namePrefix ?? "";
    this.onUnknown = opts.onUnknownDType;
  }

  private validName(name: string): boolean {
    let ok = this.names.get(name);
    if (ok === undefined) {
      if (this.names.size >= 4096) this.names.clear();
      ok = dataNameError(name) === undefined;
      this.names.set(name, ok);
    }
    return ok;
  }

  protected parse(buf: Buffer, out: DataPoint[]): number {
    const n = buf.length;
    let off = 0;
    while (n - off >= HEAD + FIXED) {
      const len = buf[off + 1]! | (buf[off + 2]! << 8) | (buf[off + 3]! << 16);
      const nsec = buf.readUInt32LE(off + 8);
      if (
        buf[off] !== LOGGER_MSG_TYPE_DATA ||
        len < FIXED ||
        len - FIXED > this.maxPayload ||
        nsec >= 1e9 ||
        buf[off + 13] !== 0 // Seq: "must be 0" in the format's samples; also a strong resync check
      ) {
        this.skip();
        off++;
        continue;
      }
      const end = off + HEAD + len;
      if (end > n) {
        this.need = end - off;
        return off;
      }
      const dtype = buf[off + 12]!;
      const body = buf.subarray(off + HEAD + FIXED, end);
      let name: string;
      let type: string;
      let payload: Uint8Array;
      const codec = byDType.get(dtype);
      if (codec !== undefined) {
        const d = codec.decode(body);
        if (d === undefined) {
          this.skip();
          off++;
          continue;
        }
        name = d.name;
        payload = d.payload;
        type = codec.iscpType;
      } else {
        if (!this.unknownSeen.has(dtype)) {
          this.unknownSeen.add(dtype);
          this.onUnknown?.(dtype);
        }
        name = UNKNOWN_DTYPE_NAME_PREFIX + dtype;
        type = UNKNOWN_DTYPE_TYPE;
        payload = body;
      }
      this.inGarbage = false;
      const sec = buf.readUInt32LE(off + 4);
      off = end;
      const full = this.prefix + name;
      if (!this.validName(full)) {
        this.stats.invalidNames++;
        continue;
      }
      out.push({
        name: full,
        type,
        payload,
        elapsedNs: elapsedFrom(sec, nsec, this.clockBase),
        srcId: this.srcId,
      });
      this.stats.frames++;
    }
    this.need = HEAD + FIXED;
    return off;
  }
}

/**
 * Encodes points as logger-msg frames with elapsed-time timestamps. A point is encodable when its type
 * has a DType in the table, or it is `bytes` named `logger-msg/<n>` (an unknown DType passed through);
 * others are counted as unsupported.
 */
export class LoggerMsgEncoder implements FrameEncoder {
  encode(points: readonly DataPoint[], stripPrefix = ""): EncodeResult {
    const frames: Buffer[] = [];
    let unsupported = 0;
    let size = 0;
    for (const p of points) {
      if (stripPrefix.length > 0 && !p.name.startsWith(stripPrefix)) continue;
      const name = p.name.slice(stripPrefix.length);
      const f = encodeLoggerMsgFrame(p.elapsedNs, p.type, name, p.payload);
      if (f === undefined) {
        unsupported++;
        continue;
      }
      frames.push(f);
      size += f.length;
    }
    return { buffer: Buffer.concat(frames, size), frames: frames.length, unsupported };
  }
}

export function encodeLoggerMsgFrame(
  elapsedNs: number,
  type: string,
  name: string,
  payload: Uint8Array,
): Buffer | undefined {
  const [sec, nsec] = elapsedToParts(elapsedNs);
  return encodeLoggerMsgRaw(sec, nsec, type, name, payload);
}

/** Frame with a raw (sec, nsec) timestamp; undefined when the point has no logger-msg form. */
export function encodeLoggerMsgRaw(
  sec: number,
  nsec: number,
  type: string,
  name: string,
  payload: Uint8Array,
): Buffer | undefined {
  let dtype: number;
  let body: Uint8Array | undefined;
  const codec = byIscpType.get(type);
  if (codec !== undefined) {
    dtype = codec.dtype;
    body = codec.encode(name, payload);
  } else if (type === UNKNOWN_DTYPE_TYPE && name.startsWith(UNKNOWN_DTYPE_NAME_PREFIX)) {
    dtype = Number(name.slice(UNKNOWN_DTYPE_NAME_PREFIX.length));
    body = Number.isInteger(dtype) && dtype >= 0 && dtype <= 255 && !byDType.has(dtype) ? payload : undefined;
  } else return undefined;
  if (body === undefined || FIXED + body.length > 0xffffff) return undefined;
  const b = Buffer.allocUnsafe(HEAD + FIXED + body.length);
  const len = FIXED + body.length;
  b[0] = LOGGER_MSG_TYPE_DATA;
  b[1] = len & 0xff;
  b[2] = (len >> 8) & 0xff;
  b[3] = (len >> 16) & 0xff;
  b.writeUInt32LE(sec >>> 0, 4);
  b.writeUInt32LE(nsec, 8);
  b[12] = dtype;
  b[13] = 0; // Seq: the samples say it must be 0
  b.set(body, HEAD + FIXED);
  return b;
}
