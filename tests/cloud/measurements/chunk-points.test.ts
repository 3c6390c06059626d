// Reading a stored chunk's points in place (the reduced series' fast path) gives what the protobuf
// decoder gives: times (negative ones too), payloads, only the asked data ID; a truncated chunk throws.
import { describe, expect, it } from "vitest";
import { pb } from "../../../proto/gen/pb.js";
import { forEachPoint } from "../../../cloud/measurements/formats/chunk-points.js";

const chunk = Buffer.from(
  pb.StoreDataChunk.encode({
    sequenceNumber: 7,
    dataPointGroups: [
      {
        dataId: { name: "a", type: "float64" },
        dataPoints: [
          { elapsedTime: 5, payload: Buffer.from([1, 2]) },
          { elapsedTime: -3_000_000_000, payload: Buffer.alloc(0) },
        ],
      },
      { dataId: { name: "b", type: "float64" }, dataPoints: [{ elapsedTime: 1, payload: Buffer.from([9]) }] },
      { dataId: { name: "a", type: "float64" }, dataPoints: [{ elapsedTime: 2 ** 40, payload: Buffer.from("xyz") }] },
    ],
  }).finish(),
);

const pointsOf = (buf: Uint8Array, type: string, name: string) => {
  const out: [number, number[]][] = [];
  forEachPoint(buf, type, name, (t, b, off, len) => out.push([t, [...b.subarray(off, off + len)]]));
  return out;
};

describe("forEachPoint", () => {
  it("visits the points of one data ID, in every group that holds it", () => {
    expect(pointsOf(chunk, "float64", "a")).toEqual([
      [5, [1, 2]],
      [-3_000_000_000, []],
      [2 ** 40, [...Buffer.from("xyz")]],
    ]);
    expect(pointsOf(chunk, "float64", "b")).toEqual([[1, [9]]]);
    expect(pointsOf(chunk, "int64", "a")).toEqual([]);
  });

  it("throws on a truncated chunk instead of reading past it", () => {
    expect(() => pointsOf(chunk.subarray(0, chunk.length - 2), "float64", "a")).toThrow();
  });
});
