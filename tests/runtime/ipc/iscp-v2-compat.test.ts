import { describe, expect, it } from "vitest";
import type { DataPoint } from "../../../runtime/datapoint.js";
import { IscpV2CompatDecoder, IscpV2CompatEncoder, encodeIscpV2Frame } from "../../../runtime/ipc/iscp-v2-compat.js";
import { decodeInto, plain, point } from "../../support/datapath.js";

const points: DataPoint[] = [
  point("1/gnss", "float64", Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]), 1_500_000_000),
  point("名前/ü", "string", "héllo", 0),
  point("2/empty", "bytes", Buffer.alloc(0), 123_456_789_012),
  point("3/big", "h264_frame/idr_frame", Buffer.alloc(70_000, 7), 999_999_999),
];

function decodeAll(chunks: Buffer[], prefix = ""): { out: DataPoint[]; dec: IscpV2CompatDecoder } {
  const dec = new IscpV2CompatDecoder({ srcId: "src", namePrefix: prefix });
  const out: DataPoint[] = [];
  for (const c of chunks) decodeInto(dec, c, out);
  return { out, dec };
}

describe("iscp-v2-compat", () => {
  it("encodes the documented layout byte for byte", () => {
    const f = encodeIscpV2Frame(0x01020304, 5, "ab", "xyz", Buffer.from([9, 8]));
    expect(f.toString("hex")).toBe("04030201" + "05000000" + "0200" + "0300" + "02000000" + "6162" + "78797a" + "0908");
  });

  it("round-trips points byte-exactly", () => {
    const enc = new IscpV2CompatEncoder();
    const { buffer, frames } = enc.encode(points);
    expect(frames).toBe(4);
    const { out, dec } = decodeAll([buffer]);
    expect(out.map(plain)).toEqual(points.map(plain));
    expect(dec.stats).toMatchObject({ frames: 4, corrupt: 0, skippedBytes: 0 });
    expect(enc.encode(out).buffer.equals(buffer)).toBe(true);
  });

  it("keeps every point of a read intact when reads land in one reused buffer (as the FIFO reader's do)", () => {
    const many = Array.from({ length: 300 }, (_, i) =>
      point(`n/${i % 7}`, "bytes", Buffer.alloc(1 + ((i * 7919) % 9000), i % 251), i * 1000),
    );
    const { buffer } = new IscpV2CompatEncoder().encode(many);
    const dec = new IscpV2CompatDecoder({ srcId: "src" });
    const read = Buffer.alloc(4096);
    const out: DataPoint[] = [];
    // Reads of varying length; each batch is consumed (copied) before the buffer is overwritten.
    for (let off = 0, k = 0; off < buffer.length; k++) {
      const n = Math.min(1 + ((k * 2654435761) % read.length), buffer.length - off);
      buffer.copy(read, 0, off, off + n);
      decodeInto(dec, read.subarray(0, n), out);
      off += n;
    }
    expect(out.map(plain)).toEqual(many.map(plain));
  });

  it("lets go of a huge frame's assembly buffer once reads need far less, but keeps it for a stream of large frames", () => {
    const enc = new IscpV2CompatEncoder();
    const dec = new IscpV2CompatDecoder({ srcId: "src" });
    const out: DataPoint[] = [];
    let smallest = Infinity;
    const feed = (buf: Buffer, piece: number) => {
      for (let i = 0; i < buf.length; i += piece) {
        decodeInto(dec, buf.subarray(i, i + piece), out);
        smallest = Math.min(smallest, dec.assemblyBytes);
      }
    };
    const frames = (n: number, size: number, from: number) =>
      enc.encode(
        Array.from({ length: n }, (_, i) => point("d", "bytes", Buffer.alloc(size, (from + i) & 0xff), from + i)),
      ).buffer;
    // Twenty 2 MiB frames in 16 KiB reads (2,560 reads): sized once, never shrunk (and grown again) between frames.
    feed(frames(1, 2 << 20, 0), 16 * 1024);
    const sized = dec.assemblyBytes;
    expect(sized).toBeGreaterThanOrEqual(2 << 20);
    smallest = Infinity;
    feed(frames(19, 2 << 20, 1), 16 * 1024);
    expect(smallest).toBe(sized);
    // Then small frames only, each split across two reads: after 1,024 such reads the buffer shrinks.
    feed(frames(1200, 100, 20), 75);
    expect(dec.assemblyBytes).toBeLessThan(1 << 20);
    expect(out.map((p) => p.elapsedNs)).toEqual(Array.from({ length: 1220 }, (_, i) => i));
    expect(out.every((p) => p.payload.every((b) => b === (p.elapsedNs & 0xff)))).toBe(true);
  });

  it("decodes frames split at every byte position", () => {
    const { buffer } = new IscpV2CompatEncoder().encode(points.slice(0, 3));
    for (let cut = 1; cut < buffer.length; cut++) {
      const { out } = decodeAll([buffer.subarray(0, cut), buffer.subarray(cut)]);
      expect(out.map(plain)).toEqual(points.slice(0, 3).map(plain));
    }
    const bytes = [...buffer].map((b) => Buffer.from([b]));
    expect(decodeAll(bytes).out.map(plain)).toEqual(points.slice(0, 3).map(plain));
  });

  it("adds the name prefix and converts device clock readings to elapsed time", () => {
    const f = encodeIscpV2Frame(100, 250, "string", "a", Buffer.from("x"));
    const dec = new IscpV2CompatDecoder({ srcId: "dc", namePrefix: "v1/10/", clockBase: { sec: 99, nsec: 500 } });
    const out: DataPoint[] = [];
    decodeInto(dec, f, out);
    expect(out[0]).toMatchObject({ name: "v1/10/a", srcId: "dc", elapsedNs: 1e9 - 250 });
    dec.setClockBase({ sec: 101, nsec: 0 });
    decodeInto(dec, f, out);
    expect(out[1]!.elapsedNs).toBe(-1e9 + 250);
  });

  it("skips garbage between frames, counts it once per run and resynchronises", () => {
    const enc = new IscpV2CompatEncoder();
    const a = enc.encode(points.slice(0, 2)).buffer;
    const b = enc.encode(points.slice(2, 3)).buffer;
    const garbage = Buffer.from(
      "\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00junk\x01\x02\x03!!!!!!!!!!!!!!!!!!!!",
      "latin1",
    );
    const { out, dec } = decodeAll([Buffer.concat([a, garbage, b, Buffer.from([0xff, 0xff]), a])]);
    expect(out.map(plain)).toEqual([...points.slice(0, 3), ...points.slice(0, 2)].map(plain));
    expect(dec.stats.corrupt).toBe(2);
    expect(dec.stats.skippedBytes).toBe(garbage.length + 2);
  });

  it("never throws on random bytes and recovers on the next valid frames", () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff;
    const noise = Buffer.from(Array.from({ length: 20_000 }, rnd));
    const good = new IscpV2CompatEncoder().encode(points.slice(0, 2)).buffer;
    const dec = new IscpV2CompatDecoder({ srcId: "src", maxPayload: 1024 });
    const out: DataPoint[] = [];
    for (let i = 0; i < noise.length; i += 333) decodeInto(dec, noise.subarray(i, i + 333), out);
    dec.end();
    decodeInto(dec, good, out);
    expect(out.slice(-2).map(plain)).toEqual(points.slice(0, 2).map(plain));
    expect(dec.stats.corrupt).toBeGreaterThan(0);
  });

  it("discards and counts a partial frame when the writer closes", () => {
    const { buffer } = new IscpV2CompatEncoder().encode(points.slice(0, 2));
    const dec = new IscpV2CompatDecoder({ srcId: "src" });
    const out: DataPoint[] = [];
    decodeInto(dec, buffer.subarray(0, buffer.length - 3), out);
    dec.end();
    decodeInto(dec, buffer, out);
    expect(out.map(plain)).toEqual([points[0], ...points.slice(0, 2)].map(plain));
    expect(dec.stats).toMatchObject({ truncated: 1, corrupt: 0 });
  });

  it("writes only points under the prefix, with the prefix removed", () => {
    const enc = new IscpV2CompatEncoder();
    const r = enc.encode([point("dc/a", "string", "1", 5), point("other/b", "string", "2", 6)], "dc/");
    expect(r.frames).toBe(1);
    expect(decodeAll([r.buffer]).out.map((p) => p.name)).toEqual(["a"]);
  });

  it("drops and counts frames whose prefixed name breaks the data-name rules", () => {
    const f = (name: string) => encodeIscpV2Frame(1, 0, "string", name, Buffer.from("v"));
    const { out, dec } = decodeAll([Buffer.concat([f(""), f("#"), f("a"), f("/a"), f("b")])], "p/");
    expect(out.map((p) => p.name)).toEqual(["p/a", "p/b"]);
    expect(dec.stats).toMatchObject({ invalidNames: 3, corrupt: 0, frames: 2 });
    // Without a prefix an empty name is invalid too.
    expect(decodeAll([f("")]).dec.stats.invalidNames).toBe(1);
  });

  it("checks every frame that repeats the last type and name: its split, its header and its payload size", () => {
    const f = (type: string, name: string, nsec = 0, payload = Buffer.from("v")) =>
      encodeIscpV2Frame(1, nsec, type, name, payload);
    const bad = f("float", "64x"); // a header with nanoseconds of 1e9 or more is no frame, whatever its name
    bad.writeUInt32LE(1_000_000_000, 4);
    const stream = [
      f("float", "64x"),
      f("float", "64x"),
      f("float6", "4x"),
      bad,
      f("float", "64x", 7),
      f("float", "64x", 0, Buffer.alloc(100)),
    ];
    const dec = new IscpV2CompatDecoder({ srcId: "src", maxPayload: 64 });
    const out: DataPoint[] = [];
    decodeInto(dec, Buffer.concat(stream), out);
    expect(out.map((p) => `${p.type} ${p.name} ${p.elapsedNs}`)).toEqual([
      "float 64x 1000000000",
      "float 64x 1000000000",
      "float6 4x 1000000000",
      "float 64x 1000000007",
    ]);
    expect(dec.stats.corrupt).toBeGreaterThan(0);
  });
});
