// Protobuf wire pieces for the hand-written iSCP encoders (the agent's stored chunks, chunk frames):
// sint64 ZigZag of a JS number as two 32-bit halves and the reverse, field sizes, re-tagging entries.
// The varints themselves are in varint.ts.
import Long from "long";
import { len32, readVarint64, rv } from "./varint.js";

const TWO32 = 4294967296;
const TWO63 = 2 ** 63;

/** The halves of the last zigzag() result (module scratch: no object per call). */
export const zz = { lo: 0, hi: 0 };

/**
 * ZigZag of Math.trunc(v) as sint64, into zz.lo / zz.hi. Within ±2^31 in int32 arithmetic; beyond, the
 * magnitude is split into 32-bit halves by division (exact for every integer double below 2^63);
 * NaN, ±Infinity and values beyond ±2^63 go through Long.fromNumber as protobufjs's Long would.
 */
export function zigzag(v: number): void {
  if (v >= -0x80000000 && v <= 0x7fffffff) {
    const n = v | 0;
    zz.lo = ((n << 1) ^ (n >> 31)) >>> 0;
    zz.hi = 0;
    return;
  }
  let lo: number;
  let hi: number;
  if (v > -TWO63 && v < TWO63) {
    const a = Math.abs(Math.trunc(v));
    hi = Math.floor(a / TWO32);
    lo = a - hi * TWO32;
    if (v < 0) {
      // two's complement of the magnitude
      lo = (~lo + 1) >>> 0;
      hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0;
    }
  } else {
    const l = Long.fromNumber(v);
    lo = l.low >>> 0;
    hi = l.high >>> 0;
  }
  const sign = hi >> 31;
  zz.lo = ((lo << 1) ^ sign) >>> 0;
  zz.hi = (((hi << 1) | (lo >>> 31)) ^ sign) >>> 0;
}

/** The number a ZigZag-encoded sint64 (halves) stands for (exact within ±2^53, nearest double beyond). */
export function unzigzag(lo: number, hi: number): number {
  const mLo = ((lo >>> 1) | (hi << 31)) >>> 0;
  const mHi = hi >>> 1;
  return lo & 1 ? -(mHi * TWO32 + mLo + 1) : mHi * TWO32 + mLo;
}

/** Bytes of a length-delimited field with a one-byte tag. */
export function lenField(n: number): number {
  return 1 + len32(n) + n;
}

/**
 * Rewrites the tag byte of each length-delimited entry in b[from, to) to `tag`: the same message under another
 * field number (iSCP DataPointGroup.data_points = 3 and StoreDataPointGroup.data_points = 2 hold the same bytes).
 */
export function retagEntries(b: Uint8Array, from: number, to: number, tag: number): void {
  let o = from;
  while (o < to) {
    b[o++] = tag;
    readVarint64(b, o, to);
    o = rv.pos + rv.lo;
  }
}
