// Protobuf varints for every hand-written encoder (iSCP chunk frames, the agent's stored chunks, the cloud's
// data responses): sizes, writes and reads. Unsigned 32-bit values take the int32 arithmetic path; 64-bit ones
// come as two 32-bit halves, or, below 2^53, as one number (putVarint, varintSize).

const TWO32 = 4294967296;

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

/** Bytes of a varint holding a non-negative integer below 2^53. */
export function varintSize(n: number): number {
  return n <= 0xffffffff ? len32(n) : len64(n >>> 0, Math.floor(n / TWO32));
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

/** Writes a non-negative integer below 2^53 as a varint at p; returns the position after it. */
export function putVarint(out: Uint8Array, p: number, n: number): number {
  return n <= 0xffffffff ? putVarint32(out, p, n) : putVarint64(out, p, n >>> 0, Math.floor(n / TWO32));
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
