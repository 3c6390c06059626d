// The broker's scan path for UpstreamChunk must see exactly what protobufjs decodes, give up (undefined)
// on anything off its plain shape, and store bytes that decode as the same StoreDataChunk.
import Long from "long";
import { describe, expect, it } from "vitest";
import { pb } from "../../../proto/gen/pb.js";
import { scanUpstreamChunkMessage } from "../../../proto/wire/chunk-scan.js";
import { decodeMessage, encodeMessage, iscp2 } from "../../../proto/wire/message.js";
import { chunkIn } from "../../../cloud/iscp/broker/upstream-handlers.js";
import { encodeRawChunk } from "../../../cloud/measurements/formats/raw-chunk.js";
import { decodeChunk, encodeChunk } from "../../../cloud/measurements/formats/codec.js";

const ELAPSED = [
  0n,
  1n,
  -1n,
  127n,
  -64n,
  2n ** 27n,
  2n ** 35n + 7n,
  -(2n ** 41n) - 3n,
  2n ** 47n - 1n,
  -(2n ** 47n),
  2n ** 48n + 3n,
  2n ** 31n - 1n,
  2n ** 31n,
  -(2n ** 31n) - 1n,
  2n ** 32n,
  2n ** 52n + 1n,
  2n ** 53n - 1n,
  -(2n ** 53n) + 1n,
  2n ** 62n,
  -(2n ** 63n),
];
const long = (v: bigint) => Long.fromBits(Number(v & 0xffffffffn) | 0, Number((v >> 32n) & 0xffffffffn) | 0, false);
const clamp = (v: bigint) =>
  Number(v > 2n ** 53n - 1n ? 2n ** 53n - 1n : v < -(2n ** 53n) + 1n ? -(2n ** 53n) + 1n : v);

function sample(): iscp2.IUpstreamChunk {
  let i = 0;
  const points = (n: number, size: number) =>
    Array.from({ length: n }, () => ({
      elapsedTime: long(ELAPSED[i++ % ELAPSED.length]!),
      payload: new Uint8Array(size).fill(i & 0xff),
    }));
  return {
    streamIdAlias: 7,
    streamChunk: {
      sequenceNumber: 4_294_967_295,
      dataPointGroups: [
        { dataId: { name: "1/ünïcode", type: "float64" }, dataPoints: points(20, 16) },
        { dataIdAlias: 3, dataPoints: points(3, 0) },
        { dataId: { name: "big", type: "bytes" }, dataPoints: points(2, 70_000) },
        { dataIdAlias: 4, dataPoints: [] },
      ],
    },
    dataIds: [{ name: "1/ünïcode", type: "float64" }],
  };
}

describe("iSCP UpstreamChunk scan path", () => {
  it("sees the alias, sequence number, data ids and every point that protobufjs decodes", () => {
    const frame = encodeMessage({ upstreamChunk: sample() }, "proto");
    const scanned = scanUpstreamChunkMessage(frame)!;
    expect(scanned).toBeDefined();
    const decoded = chunkIn(decodeMessage(frame, "proto").upstreamChunk!);
    expect(scanned.streamIdAlias).toBe(decoded.streamIdAlias);
    expect(scanned.sequenceNumber).toBe(decoded.sequenceNumber);
    expect(scanned.dataIds).toEqual(decoded.dataIds);
    expect(scanned.groups.length).toBe(4);
    scanned.groups.forEach((g, k) => {
      const d = decoded.groups[k]!;
      expect([g.dataId, g.dataIdAlias, g.count, g.payloadBytes]).toEqual([
        d.dataId,
        d.dataIdAlias,
        d.count,
        d.payloadBytes,
      ]);
      const elapsed = d.dataPoints.map((p) => BigInt(Long.fromValue(p.elapsedTime!).toString()));
      expect(g.dataPoints.map((p) => BigInt(Long.fromValue(p.elapsedTime!).toString()))).toEqual(elapsed);
      expect(g.dataPoints.map((p) => Buffer.from(p.payload!).toString("hex"))).toEqual(
        d.dataPoints.map((p) => Buffer.from(p.payload!).toString("hex")),
      );
      const payloads: string[] = [];
      g.eachPayload((p) => void payloads.push(Buffer.from(p).toString("hex")));
      expect(payloads).toEqual(d.dataPoints.map((p) => Buffer.from(p.payload!).toString("hex")));
      if (elapsed.length > 0) {
        expect(g.minElapsed).toBe(Math.min(...elapsed.map(clamp)));
        expect(g.maxElapsed).toBe(Math.max(...elapsed.map(clamp)));
      }
    });
  });

  it("gives up on other messages and on anything off the plain shape, so protobufjs decides", () => {
    expect(scanUpstreamChunkMessage(encodeMessage({ ping: { requestId: 1 } }, "proto"))).toBeUndefined();
    const frame = encodeMessage({ upstreamChunk: sample() }, "proto");
    // Truncated anywhere: never a throw, never a partial chunk.
    for (let n = 0; n < frame.length; n += 97) expect(scanUpstreamChunkMessage(frame.subarray(0, n))).toBeUndefined();
    // An unknown field (3, varint) inside a data point: protobufjs skips it, the scan leaves it to protobufjs.
    const ld = (tag: number[], body: number[]) => [...tag, body.length, ...body];
    const point = [0x18, 0x05, 0x12, 0x01, 0x01];
    const group = [0x10, 0x01, ...ld([0x1a], point)];
    const msg = Uint8Array.from(ld([0xb2, 0x04], [0x08, 0x01, ...ld([0x12], [0x08, 0x01, ...ld([0x12], group)])]));
    expect(
      decodeMessage(msg, "proto").upstreamChunk!.streamChunk!.dataPointGroups![0]!.dataPoints![0]!.payload,
    ).toEqual(new Uint8Array([1]));
    expect(scanUpstreamChunkMessage(msg)).toBeUndefined();
    expect(
      scanUpstreamChunkMessage(
        Uint8Array.from(
          ld(
            [0xb2, 0x04],
            [0x08, 0x01, ...ld([0x12], [0x08, 0x01, ...ld([0x12], [0x10, 0x01, ...ld([0x1a], [0x12, 0x01, 0x01])])])],
          ),
        ),
      ),
    ).toBeDefined();
    // Both data_id and data_id_alias in one group.
    const both = encodeMessage(
      {
        upstreamChunk: {
          streamIdAlias: 1,
          streamChunk: { sequenceNumber: 1, dataPointGroups: [{ dataId: { name: "a", type: "b" }, dataIdAlias: 2 }] },
        },
      },
      "proto",
    );
    expect(scanUpstreamChunkMessage(both)).toBeUndefined();
  });

  it("stores the received bytes as the StoreDataChunk the decoded path would store", () => {
    const frame = encodeMessage({ upstreamChunk: sample() }, "proto");
    const scanned = scanUpstreamChunkMessage(frame)!;
    const decoded = chunkIn(decodeMessage(frame, "proto").upstreamChunk!);
    const names = [
      { name: "1/ünïcode", type: "float64" },
      { name: "n3", type: "t3" },
      { name: "big", type: "bytes" },
      { name: "n4", type: "t4" },
    ];
    const raw = encodeRawChunk({
      sequenceNumber: scanned.sequenceNumber,
      rawGroups: scanned.groups.map((g, k) => ({ ...names[k]!, points: g })),
    });
    const viaObjects = encodeChunk({
      sequenceNumber: decoded.sequenceNumber,
      groups: decoded.groups.map((g, k) => ({
        ...names[k]!,
        points: g.dataPoints.map((p) => ({
          elapsedNs: BigInt(Long.fromValue(p.elapsedTime!).toString()),
          payload: p.payload!,
        })),
      })),
    });
    expect(decodeChunk(raw.payload)).toEqual(decodeChunk(viaObjects));
    expect(pb.StoreDataChunk.decode(raw.payload).dataPointGroups.map((g) => g.dataPoints?.length)).toEqual([
      20, 3, 2, 0,
    ]);
    expect(raw.points).toBe(25);
    expect([raw.minElapsedNs, raw.maxElapsedNs]).toEqual([-(2 ** 53) + 1, 2 ** 53 - 1]);
  });
});
