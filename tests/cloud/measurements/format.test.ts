// The hand-written DataResponseProto frames must decode exactly like the generated codec's output.
import { describe, expect, it } from "vitest";
import { pb } from "../../../proto/gen/pb.js";
import { dataFrame, jsonLine } from "../../../cloud/measurements/formats/data-format.js";
import { decodeChunk, encodeChunk } from "../../../cloud/measurements/formats/codec.js";
import { formatNs, parseTimeNs } from "../../../cloud/measurements/formats/time.js";

const tsNs = (t: { seconds?: unknown; nanos?: number | null }) =>
  BigInt(String(t.seconds ?? 0)) * 1_000_000_000n + BigInt(t.nanos ?? 0);

describe("measurements: data formats", () => {
  const group = {
    measUuid: "0b6a1c1e-8d1f-4d7e-9b1a-2f3c4d5e6f70",
    type: "string/json",
    name: "1/ünïcode",
    createdAtMs: 1_767_323_045_123,
  };

  it("frames DataResponseProto with an 8-byte little-endian length, for any time and payload", () => {
    for (const timeNs of [
      0n,
      1n,
      999_999_999n,
      1_767_323_045_123_456_789n,
      253_402_300_799_999_999_999n,
      -1n,
      -1_500_000_000n,
    ]) {
      for (const payload of [new Uint8Array(), new Uint8Array([0]), new Uint8Array(300).fill(7)]) {
        const f = dataFrame({ ...group }, timeNs, payload);
        const len = Number(f.readBigUInt64LE(0));
        expect(len).toBe(f.length - 8);
        const d = pb.DataResponseProto.decode(f.subarray(8));
        expect(tsNs(d.time ?? {})).toBe(timeNs);
        expect(Buffer.from(d.dataPayload).equals(Buffer.from(payload))).toBe(true);
        expect(d).toMatchObject({
          dataType: group.type,
          dataId: group.name,
          dataName: group.name,
          measurementUuid: group.measUuid,
        });
        expect(tsNs(d.createdAt!)).toBe(BigInt(group.createdAtMs) * 1_000_000n);
      }
    }
  });

  it("renders an NDJSON line per point with the payload in base64", () => {
    const line = jsonLine({ ...group }, 1_767_323_045_123_456_789n, new Uint8Array([1, 2, 250]), "ns");
    expect(line.endsWith("\n")).toBe(true);
    expect(line).toContain('"time":1767323045123456789,');
    expect(JSON.parse(line)).toEqual({
      time: expect.any(Number),
      measurement_uuid: group.measUuid,
      created_at: "2026-01-02T03:04:05.123Z",
      data_type: group.type,
      data_id: group.name,
      data_name: group.name,
      data: { d: Buffer.from([1, 2, 250]).toString("base64") },
    });
    expect(JSON.parse(jsonLine({ ...group }, 1_767_323_045_123_456_789n, new Uint8Array(), "rfc3339")).time).toBe(
      "2026-01-02T03:04:05.123456789Z",
    );
  });

  it("keeps int64 elapsed times exact through the stored chunk encoding", () => {
    const points = [2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n, -1n, 0n].map((e) => ({
      elapsedNs: e,
      payload: new Uint8Array([1]),
    }));
    const back = decodeChunk(encodeChunk({ sequenceNumber: 4294967295, groups: [{ name: "n", type: "t", points }] }));
    expect(back.sequenceNumber).toBe(4294967295);
    expect(back.groups[0]!.points.map((p) => p.elapsedNs)).toEqual(points.map((p) => p.elapsedNs));
  });

  it("parses RFC 3339 with nanoseconds and offsets, and deprecated microseconds", () => {
    expect(parseTimeNs("2026-01-02T03:04:05.123456789Z")).toBe(1_767_323_045_123_456_789n);
    expect(parseTimeNs("2026-01-02T12:04:05.5+09:00")).toBe(1_767_323_045_500_000_000n);
    expect(parseTimeNs("1767323045123456")).toBe(1_767_323_045_123_456_000n);
    expect(parseTimeNs("2026-13-02T03:04:05Z")).toBeUndefined();
    expect(parseTimeNs("soon")).toBeUndefined();
    expect(formatNs(-1n)).toBe("1969-12-31T23:59:59.999999999Z");
  });
});
