// Codec tests: our .proto sources against the codec generated inside @aptpod/iscp-ts
// (protobuf-ts), binary and canonical JSON in both directions, plus pb messages and framing.
import { createRequire } from "node:module";
import Long from "long";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { pb } from "../../../proto/gen/pb.js";
import pbDescriptor from "../../../proto/gen/pb-descriptor.js";
import iscpDescriptor from "../../../proto/gen/iscp-descriptor.js";
import { loadRoot, messageFromJson, messageToJson } from "../../../proto/wire/json.js";
import { toBigInt, toLong } from "../../../proto/wire/long.js";
import {
  decodeNegotiation,
  encodeNegotiation,
  lengthPrefixed,
  LengthPrefixedReader,
} from "../../../proto/transport/message-transport.js";
import { decodeMessage, encodeMessage, MalformedMessageError } from "../../../proto/wire/message.js";

const require = createRequire(import.meta.url);
type PtField = {
  no: number;
  name: string;
  kind: string;
  oneof?: string;
  repeat?: number;
  T: unknown;
  K?: number;
  V?: { kind: string; T: unknown };
};
type PtType = {
  typeName: string;
  fields: PtField[];
  fromBinary(b: Uint8Array): object;
  toBinary(m: object): Uint8Array;
  fromJsonString(s: string): object;
  toJson(m: object): unknown;
};
const theirs = require("@aptpod/iscp-ts/lib/encoding/codegen/message").Message as PtType;

const root = loadRoot(iscpDescriptor);
const ourMessage = root.lookupType("iscp2.Message");

function snake(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Every protobuf-ts message type reachable from Message. */
function theirTypes(): Map<string, PtType> {
  const out = new Map<string, PtType>();
  const visit = (t: PtType) => {
    if (out.has(t.typeName)) return;
    out.set(t.typeName, t);
    for (const f of t.fields) {
      if (f.kind === "message") visit((f.T as () => PtType)());
      if (f.kind === "map" && f.V?.kind === "message") visit((f.V.T as () => PtType)());
    }
  };
  visit(theirs);
  return out;
}

/** A plain object with every field of `type` set to a non-default value; `variant` picks oneof members. */
function fill(type: protobuf.Type, variant: number, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const oneofPick = new Map<string, string>();
  for (const o of type.oneofsArray) oneofPick.set(o.name, o.fieldsArray[variant % o.fieldsArray.length]!.name);
  for (const f of type.fieldsArray) {
    if (f.partOf && oneofPick.get(f.partOf.name) !== f.name) continue;
    const one = (): unknown => {
      const rt = f.resolvedType;
      if (rt instanceof protobuf.Type) return depth > 6 ? {} : fill(rt, variant + 1, depth + 1);
      if (rt instanceof protobuf.Enum) return Math.max(...Object.values(rt.values));
      switch (f.type) {
        case "string":
          return `v_${f.name}`;
        case "bool":
          return true;
        case "bytes":
          return new Uint8Array([
            0x6f, 0x9b, 0x3c, 0x1e, 0x8a, 0x20, 0x4c, 0x3d, 0x9e, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
          ]);
        case "uint32":
          return 4_000_000_000;
        case "sint64":
          return Long.fromString("-1700000000000000001");
        case "uint64":
          return Long.fromString("18000000000000000000", true);
        default:
          return 7;
      }
    };
    if (f.map) out[f.name] = { 3: one(), 4000000000: one() };
    else if (f.repeated) out[f.name] = [one(), one()];
    else out[f.name] = one();
  }
  return out;
}

const kinds = ourMessage.oneofs.message!.fieldsArray.map((f) => f.name);

describe("iSCP v2 codec", () => {
  it("declares the same messages, field numbers and kinds as iscp-ts", () => {
    const types = theirTypes();
    expect(types.size).toBe(80);
    for (const [name, t] of types) {
      const ours = root.lookupType(name);
      const mine = ours.fieldsArray
        .map(
          (f) =>
            `${f.id}:${snake(f.name)}:${f.partOf ? snake(f.partOf.name) : ""}:${f.map ? "map" : f.repeated ? "rep" : ""}`,
        )
        .sort();
      const their = t.fields
        .map(
          (f) =>
            `${f.no}:${f.name}:${f.oneof ? snake(f.oneof) : ""}:${f.kind === "map" ? "map" : f.repeat ? "rep" : ""}`,
        )
        .sort();
      expect(mine, name).toEqual(their);
    }
    expect(kinds).toHaveLength(29);
  });

  for (const kind of kinds) {
    it(`round-trips ${kind} through iscp-ts (binary and JSON)`, () => {
      for (const variant of [0, 1, 2]) {
        const msg = { [kind]: fill(ourMessage.fields[kind]!.resolvedType as protobuf.Type, variant) };
        const ourJson = JSON.parse(Buffer.from(encodeMessage(msg, "json")).toString());
        // ours(binary) -> theirs -> canonical JSON equals our canonical JSON
        const viaTheirBinary = theirs.toJson(theirs.fromBinary(encodeMessage(msg, "proto")));
        expect(viaTheirBinary).toEqual(ourJson);
        // our JSON is accepted by their strict JSON reader and comes back identical
        const theirMsg = theirs.fromJsonString(JSON.stringify(ourJson));
        expect(theirs.toJson(theirMsg)).toEqual(ourJson);
        // theirs(binary) -> ours
        const back = decodeMessage(theirs.toBinary(theirMsg), "proto");
        expect(JSON.parse(Buffer.from(encodeMessage(back, "json")).toString())).toEqual(ourJson);
        // our JSON decoder gives the same as our binary decoder
        expect(decodeMessage(encodeMessage(msg, "json"), "json")).toEqual(
          decodeMessage(encodeMessage(msg, "proto"), "proto"),
        );
      }
    });
  }

  it("writes canonical JSON: defaults omitted, int64 as strings, enums by name, oneof alias 0 kept", () => {
    const json = Buffer.from(
      encodeMessage(
        {
          upstreamChunk: {
            streamIdAlias: 1,
            streamChunk: {
              sequenceNumber: 0,
              dataPointGroups: [
                { dataIdAlias: 0, dataPoints: [{ elapsedTime: Long.fromNumber(-5), payload: new Uint8Array([1, 2]) }] },
              ],
            },
          },
        },
        "json",
      ),
    ).toString();
    expect(JSON.parse(json)).toEqual({
      upstreamChunk: {
        streamIdAlias: 1,
        streamChunk: { dataPointGroups: [{ dataIdAlias: 0, dataPoints: [{ elapsedTime: "-5", payload: "AQI=" }] }] },
      },
    });
    const resp = JSON.parse(
      Buffer.from(
        encodeMessage({ connectResponse: { requestId: 0, resultCode: 66, resultString: "no" } }, "json"),
      ).toString(),
    );
    expect(resp).toEqual({ connectResponse: { resultCode: "AUTH_FAILED", resultString: "no" } });
  });

  it("accepts snake_case names and numeric enums on input", () => {
    const m = decodeMessage(
      Buffer.from(JSON.stringify({ connect_response: { request_id: 4, result_code: 66, protocol_version: "2.0.0" } })),
      "json",
    );
    expect(m.connectResponse).toMatchObject({ requestId: 4, resultCode: 66, protocolVersion: "2.0.0" });
  });

  it("rejects malformed frames", () => {
    expect(() => decodeMessage(new Uint8Array([0xff, 0xff, 0xff]), "proto")).toThrow(MalformedMessageError);
    expect(() => decodeMessage(new Uint8Array(0), "proto")).toThrow(MalformedMessageError);
    expect(() => decodeMessage(Buffer.from("{}"), "json")).toThrow(MalformedMessageError);
    expect(() => decodeMessage(Buffer.from("[1]"), "json")).toThrow(MalformedMessageError);
    expect(() => decodeMessage(Buffer.from('{"ping":{"requestId":"x"}}'), "json")).toThrow(MalformedMessageError);
    expect(() => decodeMessage(Buffer.from('{"ping":{},"pong":{}}'), "json")).toThrow(MalformedMessageError);
    expect(() => decodeMessage(Buffer.from([0xc3, 0x28]), "json")).toThrow(MalformedMessageError);
  });
});

describe("pb data messages", () => {
  const pbRoot = loadRoot(pbDescriptor);
  it("round-trips StoreDataChunks (sint64 elapsed time) in binary and JSON", () => {
    const msg = {
      measUuid: "6f9b3c1e-8a20-4c3d-9e11-223344556677",
      sequenceUuid: "0f9b3c1e-8a20-4c3d-9e11-223344556677",
      chunks: [
        {
          sequenceNumber: 1,
          dataPointGroups: [
            {
              dataId: { name: "n", type: "t" },
              dataPoints: [{ elapsedTime: Long.fromNumber(-42), payload: new Uint8Array([9]) }],
            },
          ],
        },
      ],
    };
    const bin = pb.StoreDataChunks.encode(msg).finish();
    const back = pb.StoreDataChunks.decode(bin);
    expect(Long.fromValue(back.chunks[0]!.dataPointGroups![0]!.dataPoints![0]!.elapsedTime as Long).toNumber()).toBe(
      -42,
    );
    // sint64 is zigzag: -42 encodes as 83
    expect([...bin]).toContain(83);
    const type = pbRoot.lookupType("pb.StoreDataChunks");
    const json = messageToJson(type, back as unknown as Record<string, unknown>);
    expect(json).toEqual({
      measUuid: msg.measUuid,
      sequenceUuid: msg.sequenceUuid,
      chunks: [
        {
          sequenceNumber: 1,
          dataPointGroups: [
            { dataId: { name: "n", type: "t" }, dataPoints: [{ elapsedTime: "-42", payload: "CQ==" }] },
          ],
        },
      ],
    });
    expect(pb.StoreDataChunks.encode(messageFromJson(type, json)).finish()).toEqual(bin);
  });

  it("has every data message of the spec with its field numbers", () => {
    const expected: Record<string, string> = {
      DataResponseProto: "time=1 dataType=2 dataId=3 dataPayload=4 measurementUuid=5 createdAt=6 dataName=7",
      DomainEventProto: "measUuid=1 occurredAt=2 measurementUpdated=3",
      StoreProto: "measUuid=1 serialNumber=2 measEnd=3 sectionEnd=4 sectionTotalCount=5 dataPoints=6 sections=7",
      SectionProto: "serialNumber=1 sectionEnd=2 sectionTotalCount=3 dataPoints=4",
      DataPointProto: "elapsedTime=1 channel=2 dataType=3 dataPayload=4",
      StoreDataChunks: "measUuid=1 sequenceUuid=2 chunks=3",
      StoreDataChunk: "sequenceNumber=1 dataPointGroups=2",
      StoreDataPointGroup: "dataId=1 dataPoints=2",
      StoreDataPoint: "elapsedTime=1 payload=2",
      StoreDataID: "name=1 type=2",
      MeasSequenceChunks: "chunks=1",
      MeasSequenceChunk: "sequenceNumber=1 dataPointGroups=2",
    };
    for (const [name, fields] of Object.entries(expected)) {
      const t = pbRoot.lookupType(`pb.${name}`);
      expect(t.fieldsArray.map((f) => `${f.name}=${f.id}`).join(" "), name).toBe(fields);
    }
    expect(pbRoot.lookupType("pb.StoreDataPoint").fields.elapsedTime!.type).toBe("sint64");
    expect(pbRoot.lookupType("pb.DataPointProto").fields.elapsedTime!.type).toBe("int64");
  });
});

describe("int64 helpers", () => {
  it("convert bigint <-> Long exactly across the whole range", () => {
    for (const v of [
      0n,
      1n,
      -1n,
      2n ** 31n,
      -(2n ** 31n),
      2n ** 32n + 5n,
      -(2n ** 40n) - 7n,
      2n ** 63n - 1n,
      -(2n ** 63n),
      1_700_000_000_000_000_001n,
    ]) {
      const l = toLong(v);
      expect([l.toString(), toBigInt(l)]).toEqual([v.toString(), v]);
    }
    const u = toLong(18_000_000_000_000_000_000n, true);
    expect([u.toString(), toBigInt(u)]).toEqual(["18000000000000000000", 18_000_000_000_000_000_000n]);
    expect([toBigInt(-5), toBigInt("7"), toBigInt(null), toLong(-3).toString()]).toEqual([-5n, 7n, 0n, "-3"]);
  });
});

describe("QUIC framing", () => {
  it("encodes and decodes the negotiation stream", () => {
    const b = encodeNegotiation({ enc: "proto", x: "ü" });
    expect(decodeNegotiation(b)).toEqual({ enc: "proto", x: "ü" });
    expect(() => decodeNegotiation(new Uint8Array([0, 5, 1]))).toThrow();
    expect(() => decodeNegotiation(encodeNegotiation({ "": "v" }))).toThrow();
  });

  it("reassembles length-prefixed messages from arbitrary chunks", () => {
    const frames = [new Uint8Array([1, 2, 3]), new Uint8Array(0), new Uint8Array(300).fill(7)];
    const all = Buffer.concat(frames.map(lengthPrefixed));
    const r = new LengthPrefixedReader(1000);
    const out: Uint8Array[] = [];
    for (let i = 0; i < all.length; i += 5) out.push(...r.push(all.subarray(i, i + 5)));
    expect(out.map((f) => [...f])).toEqual(frames.map((f) => [...f]));
    expect(() => new LengthPrefixedReader(10).push(lengthPrefixed(new Uint8Array(11)))).toThrow();
  });

  it("reassembles large messages from QUIC-sized chunks and odd splits, refusing an oversized one at its header", () => {
    const frames = [
      new Uint8Array(1 << 20).map((_, i) => i * 31),
      new Uint8Array([9]),
      new Uint8Array(5000).map((_, i) => i),
      new Uint8Array(0),
    ];
    const all = Buffer.concat(frames.map(lengthPrefixed));
    for (const sizes of [[4096], [1, 2, 3, 4096, 7], [all.length]]) {
      const r = new LengthPrefixedReader(2 << 20);
      const out: Uint8Array[] = [];
      for (let at = 0, k = 0; at < all.length; k++) {
        const n = sizes[k % sizes.length]!;
        out.push(...r.push(all.subarray(at, at + n)));
        at += n;
      }
      expect(out.map((f, i) => Buffer.from(f).equals(frames[i]!))).toEqual([true, true, true, true]);
    }
    // Only the 4-byte header of a too-large message is needed to refuse it.
    expect(() => new LengthPrefixedReader(100).push(lengthPrefixed(new Uint8Array(101)).subarray(0, 4))).toThrow(
      /101 bytes exceeds 100/,
    );
  });
});
