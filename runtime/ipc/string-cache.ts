// Decoding the same data name and type bytes for every frame costs more than parsing the frame:
// a tiny cache compares the raw bytes with recently seen ones and reuses the string.

const SLOTS = 16;

export class StringCache {
  private readonly keys: Buffer[] = [];
  private readonly values: string[] = [];
  private next = 0;

  constructor(private readonly prefix = "") {}

  /** The string for buf[start, end) decoded as UTF-8, with the cache's prefix prepended. */
  get(buf: Buffer, start: number, end: number): string {
    const len = end - start;
    const keys = this.keys;
    outer: for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      if (k.length !== len) continue;
      for (let j = 0; j < len; j++) if (k[j] !== buf[start + j]) continue outer;
      return this.values[i]!;
    }
    const value = this.prefix + buf.toString("utf8", start, end);
    const key = Buffer.from(buf.subarray(start, end));
    if (keys.length < SLOTS) {
      keys.push(key);
      this.values.push(value);
    } else {
      keys[this.next] = key;
      this.values[this.next] = value;
      this.next = (this.next + 1) % SLOTS;
    }
    return value;
  }
}
