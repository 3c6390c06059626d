// Decoding the same data name and type bytes for every frame costs more than parsing the frame:
// a tiny cache compares the raw bytes with recently seen ones and reuses the string.

const SLOTS = 16;

export class StringCache {
  private readonly keys: Buffer[] = [];
  private readonly values: Array<string | undefined> = [];
  private next = 0;

  /** `accept` checks each new string once (e.g. the data-name rules); rejected ones come back undefined. */
  constructor(
    private readonly prefix = "",
    private readonly accept: (s: string) => boolean = () => true,
  ) {}

  /** The string for buf[start, end) decoded as UTF-8, with the cache's prefix prepended. */
  get(buf: Buffer, start: number, end: number): string | undefined {
    const len = end - start;
    const keys = this.keys;
    outer: for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      if (k.length !== len) continue;
      for (let j = 0; j < len; j++) if (k[j] !== buf[start + j]) continue outer;
      return this.values[i]!;
    }
    const decoded = this.prefix + buf.toString("utf8", start, end);
    const value = this.accept(decoded) ? decoded : undefined;
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
