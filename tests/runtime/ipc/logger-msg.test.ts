import { describe, expect, it } from "vitest";
import type { DataPoint } from "../../../runtime/datapoint.js";
import { LoggerMsgDecoder, LoggerMsgEncoder, encodeLoggerMsgRaw } from "../../../runtime/ipc/logger-msg.js";
import { decodeInto, plain, point } from "../../support/datapath.js";

function frameHex(dtype: number, body: Buffer, sec = 1, nsec = 2): Buffer {
  const len = 10 + body.length;
  const h = Buffer.alloc(14);
  h[0] = 1;
  h.writeUIntLE(len, 1, 3);
  h.writeUInt32LE(sec, 4);
  h.writeUInt32LE(nsec, 8);
  h[12] = dtype;
  return Buffer.concat([h, body]);
}

describe("logger-msg", () => {
  it("encodes the sample's String message byte for byte (DType 0x1D, ID, data)", () => {
    const f = encodeLoggerMsgRaw(3, 4, "string", "abc", Buffer.from("Hello intdash!"))!;
    const expected = frameHex(0x1d, Buffer.concat([Buffer.from([3]), Buffer.from("abcHello intdash!")]), 3, 4);
    expect(f.toString("hex")).toBe(expected.toString("hex"));
    expect(f.length).toBe(14 + 1 + 3 + 14);
  });

  it("round-trips points byte-exactly, split at every position", () => {
    const pts: DataPoint[] = [
      point("abc", "string", "Hello intdash!", 1_000_000_001),
      point("x/y", "string", "", 0),
      point("logger-msg/200", "bytes", Buffer.from([1, 2, 3]), 7),
    ];
    const enc = new LoggerMsgEncoder();
    const { buffer, frames, unsupported } = enc.encode(pts);
    expect([frames, unsupported]).toEqual([3, 0]);
    for (let cut = 0; cut <= buffer.length; cut++) {
      const dec = new LoggerMsgDecoder({ srcId: "src" });
      const out: DataPoint[] = [];
      decodeInto(dec, buffer.subarray(0, cut), out);
      decodeInto(dec, buffer.subarray(cut), out);
      expect(out.map(plain)).toEqual(pts.map(plain));
      expect(enc.encode(out).buffer.equals(buffer)).toBe(true);
    }
  });

  it("turns an unknown DType into bytes and reports it once", () => {
    const seen: number[] = [];
    const dec = new LoggerMsgDecoder({ srcId: "src", namePrefix: "p/", onUnknownDType: (d) => seen.push(d) });
    const out: DataPoint[] = [];
    decodeInto(
      dec,
      Buffer.concat([
        frameHex(0x42, Buffer.from("xy")),
        frameHex(0x42, Buffer.from("z")),
        frameHex(0x43, Buffer.alloc(0)),
      ]),
      out,
    );
    expect(out.map((p) => [p.name, p.type, Buffer.from(p.payload).toString()])).toEqual([
      ["p/logger-msg/66", "bytes", "xy"],
      ["p/logger-msg/66", "bytes", "z"],
      ["p/logger-msg/67", "bytes", ""],
    ]);
    expect(seen).toEqual([0x42, 0x43]);
  });

  it("counts types it cannot write as unsupported", () => {
    const r = new LoggerMsgEncoder().encode([point("a", "float64", Buffer.alloc(8), 0), point("b", "string", "ok", 0)]);
    expect([r.frames, r.unsupported]).toEqual([1, 1]);
  });

  it("resynchronises after garbage and after a String body whose ID overruns it", () => {
    const good = encodeLoggerMsgRaw(5, 6, "string", "id", Buffer.from("v"))!;
    const badBody = frameHex(0x1d, Buffer.from([200, 0x41])); // ID length 200 > body
    const dec = new LoggerMsgDecoder({ srcId: "src" });
    const out: DataPoint[] = [];
    decodeInto(dec, Buffer.concat([good, Buffer.from([0, 1, 0xff, 0xff, 0xff, 9]), good, badBody, good]), out);
    expect(out.length).toBe(3);
    expect(out.every((p) => p.name === "id" && Buffer.from(p.payload).toString() === "v")).toBe(true);
    expect(dec.stats.corrupt).toBe(2);
  });

  it("converts timestamps against the clock base", () => {
    const dec = new LoggerMsgDecoder({ srcId: "src", clockBase: { sec: 10, nsec: 0 } });
    const out: DataPoint[] = [];
    decodeInto(dec, encodeLoggerMsgRaw(12, 5, "string", "a", Buffer.alloc(0))!, out);
    expect(out[0]!.elapsedNs).toBe(2e9 + 5);
  });

  it("never throws on random bytes and recovers on the next valid frames", () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >> 8) & 0xff;
    const noise = Buffer.from(Array.from({ length: 30_000 }, rnd));
    const dec = new LoggerMsgDecoder({ srcId: "src", maxPayload: 4096 });
    const out: DataPoint[] = [];
    for (let i = 0; i < noise.length; i += 517) decodeInto(dec, noise.subarray(i, i + 517), out);
    dec.end();
    decodeInto(dec, encodeLoggerMsgRaw(1, 1, "string", "ok", Buffer.from("fine"))!, out);
    expect(out.at(-1)).toMatchObject({ name: "ok", type: "string" });
    expect(dec.stats.corrupt).toBeGreaterThan(0);
  });

  it("drops and counts frames whose prefixed name breaks the data-name rules", () => {
    const dec = new LoggerMsgDecoder({ srcId: "src", namePrefix: "v1/" });
    const out: DataPoint[] = [];
    const f = (id: string) => encodeLoggerMsgRaw(1, 0, "string", id, Buffer.from("v"))!;
    decodeInto(dec, Buffer.concat([f(""), f("a//b"), f("ok"), f("x+"), f("ok/")]), out);
    expect(out.map((p) => p.name)).toEqual(["v1/ok"]);
    expect(dec.stats).toMatchObject({ invalidNames: 4, corrupt: 0, frames: 1 });
  });
});
