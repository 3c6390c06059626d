// Protobuf wire pieces for the hand-written iSCP encoders (the agent's stored chunks, chunk frames):
// sint64 ZigZag of a JS number as two 32-bit halves, varint sizes and writes, and the reverse.
import Long from "long";

const TWO32 = 4294967296;
const TWO63 = 9223372036854775808;

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

/** Bytes of a varint holding an unsigned 32-bit value. */
export function len32(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Bytes of a varint holding an unsigned 64-bit value given as 32-bit halves. */
export function len64(lo: number, hi: number): number {
  if (hi === 0) return len32(lo);
  const mid = ((lo >>> 28) | (hi << 4)) >>> 0;
  const top = hi >>> 24;
  if (top === 0) return mid < 0x4000 ? (mid < 0x80 ? 5 : 6) : mid < 0x200000 ? 7 : 8;
  return top < 0x80 ? 9 : 10;
}

/** Bytes of a length-delimited field with a one-byte tag. */
export function lenField(n: number): number {
  return 1 + len32(n) + n;
}

/** Writes an unsigned 32-bit varint at p; returns the position after it. */
export function putVarint32(out: Uint8Array, p: number, v: number): number {
  while (v > 0x7f) {
    out[p++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[p++] = v;
  return p;
}

/** Writes an unsigned 64-bit varint given as halves at p; returns the position after it. */
export function putVarint64(out: Uint8Array, p: number, lo: number, hi: number): number {
  while (hi !== 0) {
    out[p++] = (lo & 0x7f) | 0x80;
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  return putVarint32(out, p, lo);
}

/** A varint read by readVarint64 (module scratch): halves and the position after it. */
export const rv = { lo: 0, hi: 0, pos: 0 };

/** Reads a varint of up to 64 bits at p (halves into rv); throws past `end` or beyond 10 bytes. */
export function readVarint64(b: Uint8Array, p: number, end: number): void {
  let lo = 0;
  let hi = 0;
  for (let shift = 0; shift < 70; shift += 7) {
    if (p >= end) throw new Error("truncated varint");
    const x = b[p++]!;
    const bits = x & 0x7f;
    if (shift < 28) lo |= bits << shift;
    else if (shift === 28) {
      lo |= bits << 28;
      hi |= bits >>> 4;
    } else hi |= bits << (shift - 32);
    if (x < 0x80) {
      rv.lo = lo >>> 0;
      rv.hi = hi >>> 0;
      rv.pos = p;
      return;
    }
  }
  throw new Error("varint longer than 10 bytes");
}

/**
 * Rewrites the tag byte of each length-delimited entry in b[from, to) to `tag`: the same message under another
 * field number (iSCP DataPointGroup.data_points = 3 and StoreDataPointGroup.data_points = 2 hold the same bytes).
 */
export function retagEntries(b: Uint8Array, from: number, to: number, tag: number): void {
  let o = from;
  while (o < to) {
    b[o++] = tag;
    let len = 0;
    for (let shift = 0; ; shift += 7) {
      const x = b[o++]!;
      len += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) break;
    }
    o += len;
  }
}
