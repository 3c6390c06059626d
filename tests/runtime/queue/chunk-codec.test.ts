// The chunk codec: the bytes of one stored chunk (points grouped by data id), the builder the batcher fills,
// and chunks an older agent stored.
import { describe, expect, it } from "vitest";
import {
  ChunkBuilder,
  chunkGroups,
  chunkPoints,
  chunkView,
  decodeChunk,
  encodeChunk,
} from "../../../runtime/queue/chunk-codec.js";
import { encodeChunkV1 } from "../../../runtime/queue/chunk-v1.js";
import { plain, point } from "../../support/datapath.js";
import { grouped, pts } from "./helpers.js";

describe("chunk codec", () => {
  it("round-trips points grouped by data id, each data id listed once", () => {
    const input = [...pts(5), point("名/ü", "string", "", -5)];
    const buf = encodeChunk(input);
    const d = decodeChunk(buf);
    expect(d.count).toBe(6);
    expect(d.ids.length).toBe(6);
    expect(chunkPoints(d, "src").map(plain)).toEqual(grouped(input).map(plain));
    expect(encodeChunk(chunkPoints(d, "src")).equals(buf)).toBe(true);
    // Per group 12 bytes and the id; per 16-byte point 1 + 1 + (1 + elapsed varint) + (1 + 1) + 16.
    const elapsed = (ns: number) => (ns === 0 ? 1 : Math.ceil(Math.log2(Math.abs(ns) * 2 + 1) / 7));
    const idBytes = d.ids.reduce((n, id) => n + 12 + Buffer.byteLength(id.name) + Buffer.byteLength(id.type), 0);
    expect(buf.length).toBe(
      6 + idBytes + pts(5).reduce((n, p) => n + 21 + elapsed(p.elapsedNs), 0) + 2 + 1 + elapsed(-5) + 2,
    );
  });

  it("keeps each data id's points as iSCP DataPoint entries (the spans a frame copies)", () => {
    const v = chunkView(encodeChunk([point("a", "t", "xy", 3), point("b", "u", "", -1), point("a", "t", "z", 300)]));
    expect(v.count).toBe(3);
    expect(
      v.groups.map((g) => [g.dataId.name, g.dataId.type, g.count, v.buffer.subarray(g.start, g.end).toString("hex")]),
    ).toEqual([
      ["a", "t", 2, "1a06" + "0806" + "12027879" + "1a06" + "08d804" + "12017a"],
      ["b", "u", 1, "1a04" + "0801" + "1200"],
    ]);
  });

  it("reads chunks an older agent stored (the earlier layout) the same way", () => {
    const input = [...pts(7), point("big", "jpeg", Buffer.alloc(70_000, 3), 2 ** 40)];
    const old = encodeChunkV1(input);
    expect(chunkPoints(decodeChunk(old)).map(plain)).toEqual(input.map((p) => ({ ...plain(p), srcId: "" })));
    expect(chunkView(old).buffer.equals(encodeChunk(input))).toBe(true);
  });

  it("refuses a corrupt chunk with an error instead of reading past it", () => {
    const buf = encodeChunk(pts(4));
    const cut = buf.subarray(0, buf.length - 3);
    expect(() => chunkView(cut)).toThrow(/length mismatch/);
    const bad = Buffer.from(buf);
    bad[chunkView(buf).groups[0]!.start] = 0x22;
    expect(() => decodeChunk(bad)).toThrow(/corrupt/);
  });
});

describe("chunk builder", () => {
  it("grows for large payloads, handles many data ids and resets after finish", () => {
    const b = new ChunkBuilder();
    const input = [
      ...Array.from({ length: 1000 }, (_, i) => point(`id/${i}`, "int64", Buffer.alloc(8, i), i)),
      point("big", "jpeg", Buffer.alloc(300_000, 9), 1e12),
    ];
    for (const p of input) b.add(p);
    const buf = b.finish(16);
    expect(buf.subarray(16).equals(encodeChunk(input))).toBe(true);
    expect(chunkPoints(decodeChunk(buf.subarray(16))).map(plain)).toEqual(
      input.map((p) => ({ ...plain(p), srcId: "" })),
    );
    expect(b.count).toBe(0);
    b.add(point("x", "t", "y", 1));
    expect(decodeChunk(b.finish()).ids).toEqual([{ name: "x", type: "t" }]);
  });

  it("finishes one-data-id chunks in place without sharing bytes between chunks", () => {
    const b = new ChunkBuilder();
    const chunks = [1, 2, 3].map((k) => {
      for (let i = 0; i < 50 * k; i++) b.add(point("one", "bytes", Buffer.alloc(k * 100, k), i));
      return b.finish(16);
    });
    chunks.forEach((c, i) => {
      const d = decodeChunk(c.subarray(16));
      expect(d.count).toBe(50 * (i + 1));
      expect(
        chunkPoints(d).every((p) => p.payload.length === (i + 1) * 100 && p.payload.every((x) => x === i + 1)),
      ).toBe(true);
    });
  });
});

describe("chunk groups", () => {
  it("group points by data id in first-appearance order", () => {
    const d = decodeChunk(
      encodeChunk([point("a", "t", "1", 1), point("b", "t", "2", 2), point("a", "t", "3", 3), point("a", "u", "4", 4)]),
    );
    expect(
      chunkGroups(d).map((g) => [
        g.dataId.type + ":" + g.dataId.name,
        g.points.map((p) => `${p.elapsedNs}=${p.payload.toString()}`),
      ]),
    ).toEqual([
      ["t:a", ["1=1", "3=3"]],
      ["t:b", ["2=2"]],
      ["u:a", ["4=4"]],
    ]);
  });
});
