// The one set of varints every hand-written encoder uses, against protobufjs's writer and reader.
import Long from "long";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { len64, putVarint, putVarint64, readVarint64, rv, varintSize } from "../../../proto/wire/varint.js";
import { retagEntries } from "../../../proto/wire/pb-bits.js";

const values = [
  0,
  1,
  127,
  128,
  300,
  16_383,
  16_384,
  2 ** 21,
  2 ** 28 - 1,
  2 ** 28,
  2 ** 31,
  2 ** 32 - 1,
  2 ** 32,
  1_700_000_000_123,
  2 ** 49 + 7,
  2 ** 53 - 1,
];

const theirs = (n: number): Uint8Array => protobuf.Writer.create().uint64(Long.fromNumber(n, true)).finish();

describe("varints", () => {
  it("writes the bytes protobufjs writes for every size up to 2^53, and sizes them", () => {
    for (const n of values) {
      const out = Buffer.alloc(12);
      const end = putVarint(out, 1, n);
      expect([...out.subarray(1, end)], String(n)).toEqual([...theirs(n)]);
      expect(varintSize(n), String(n)).toBe(end - 1);
    }
  });

  it("writes and reads 64-bit halves as protobufjs does, to the full 10 bytes", () => {
    for (const [lo, hi] of [
      [0, 0],
      [0xffffffff, 0],
      [0, 1],
      [0x12345678, 0x9abcdef],
      [0xffffffff, 0xffffffff],
    ] as const) {
      const out = new Uint8Array(10);
      const end = putVarint64(out, 0, lo, hi);
      const want = protobuf.Writer.create()
        .uint64(new Long(lo | 0, hi | 0, true))
        .finish();
      expect([...out.subarray(0, end)]).toEqual([...want]);
      expect(len64(lo, hi)).toBe(end);
      readVarint64(out, 0, end);
      expect([rv.lo, rv.hi, rv.pos]).toEqual([lo, hi, end]);
    }
  });

  it("refuses a truncated varint", () => {
    expect(() => readVarint64(Uint8Array.of(0x80, 0x80), 0, 2)).toThrow("truncated varint");
  });

  it("re-tags length-delimited entries whatever their lengths", () => {
    const entry = (len: number) => [0x1a, ...theirs(len), ...new Array<number>(len).fill(0x1a)];
    const b = Uint8Array.from([...entry(3), ...entry(200), ...entry(0)]);
    retagEntries(b, 0, b.length, 0x12);
    expect([b[0], b[5], b[5 + 3 + 200]]).toEqual([0x12, 0x12, 0x12]);
    expect(b.filter((x) => x === 0x12).length).toBe(3);
  });
});
