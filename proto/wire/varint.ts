// Protobuf varints for the hand-written encoders (data responses, stored chunks): unsigned, below 2^53.

export function varintSize(n: number): number {
  let s = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    s++;
  }
  return s;
}

/** Writes `n` at `off`; returns the offset after it. */
export function putVarint(buf: Buffer, off: number, n: number): number {
  while (n >= 0x80) {
    buf[off++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[off++] = n;
  return off;
}
