// Chunk uploads in and data points out: StoreDataChunks (protobuf or its JSON form) to the area's
// model, StoreDataChunk as the stored row payload, DataResponseProto / DomainEventProto frames.
import * as Schema from "effect/Schema";
import Long from "long";

const LongCtor = Long;
import { Invalid } from "../../errors.js";
import { decodeOrThrow } from "../../http/decode.js";
import { pb } from "../../../proto/gen/pb.js";
import { dataIdError } from "../../../proto/wire/data-id-rules.js";
import { toTimestamp } from "./time.js";

/** A point of an uploaded chunk (StoreDataPoint): its data id is its group's. */
export interface UploadedPoint {
  elapsedNs: bigint;
  payload: Uint8Array;
}
export interface PointGroup {
  name: string;
  type: string;
  points: UploadedPoint[];
}
export interface Chunk {
  sequenceNumber: number;
  groups: PointGroup[];
}
export interface ChunkUpload {
  measUuid: string;
  sequenceUuid: string;
  chunks: Chunk[];
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const isUuid = (s: string) => UUID_RE.test(s);

const toBigInt = (v: number | Long | string | null | undefined): bigint =>
  v === null || v === undefined
    ? 0n
    : typeof v === "number"
      ? BigInt(v)
      : typeof v === "string"
        ? BigInt(v)
        : BigInt.asIntN(64, (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0));

/** int64 for protobufjs without a detour through decimal text. */
const toLong = (b: bigint): Long =>
  LongCtor.fromBits(Number(b & 0xffffffffn) | 0, Number((b >> 32n) & 0xffffffffn) | 0, false);

const MAX_NAMED_IDS = 10;
/** A client's string in an error message: JSON-quoted (control characters and lone surrogates escaped), cut short. */
const shown = (s: string) => JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}…` : s);

function checkUpload(u: ChunkUpload): ChunkUpload {
  const props: Record<string, string> = {};
  if (!isUuid(u.measUuid)) props.meas_uuid = "expected a UUID";
  if (!isUuid(u.sequenceUuid)) props.sequence_uuid = "expected a UUID";
  let badIds = 0;
  u.chunks.forEach((c, i) => {
    if (!Number.isInteger(c.sequenceNumber) || c.sequenceNumber < 1 || c.sequenceNumber > 0xffffffff)
      props[`chunks.${i}.sequence_number`] = "expected an integer from 1 to 4294967295";
    c.groups.forEach((g, j) => {
      const bad = dataIdError(g.name, g.type);
      // The broker and the agent would refuse this data id: none of the upload is stored. A few are named.
      if (bad && badIds++ < MAX_NAMED_IDS)
        props[`chunks.${i}.data_point_groups.${j}.data_id`] = `${bad} (name ${shown(g.name)}, type ${shown(g.type)})`;
    });
  });
  const [first] = Object.entries(props);
  if (first) throw new Invalid(`invalid body: ${first[0]}: ${first[1]}`, props);
  return { ...u, measUuid: u.measUuid.toLowerCase(), sequenceUuid: u.sequenceUuid.toLowerCase() };
}

function fromPbChunk(c: pb.IStoreDataChunk): Chunk {
  return {
    sequenceNumber: c.sequenceNumber ?? 0,
    groups: (c.dataPointGroups ?? []).map((g) => ({
      name: g.dataId?.name ?? "",
      type: g.dataId?.type ?? "",
      points: (g.dataPoints ?? []).map((p) => ({
        elapsedNs: toBigInt(p.elapsedTime),
        payload: p.payload ?? new Uint8Array(),
      })),
    })),
  };
}

export function decodeStoreDataChunksProto(buf: Uint8Array): ChunkUpload {
  let raw: pb.StoreDataChunks;
  try {
    raw = pb.StoreDataChunks.decode(buf);
  } catch (err) {
    throw new Invalid(`body is not a valid StoreDataChunks protobuf message: ${(err as Error).message}`);
  }
  return checkUpload({
    measUuid: raw.measUuid ?? "",
    sequenceUuid: raw.sequenceUuid ?? "",
    chunks: (raw.chunks ?? []).map(fromPbChunk),
  });
}

// proto3 JSON: lowerCamelCase or snake_case keys, int64 as a decimal string or a number, bytes as base64.
const Int64Json = Schema.Union(Schema.BigInt, Schema.BigIntFromNumber).pipe(
  Schema.filter((b) => b >= INT64_MIN && b <= INT64_MAX, { message: () => "expected a 64-bit integer" }),
);
const Base64Json = Schema.String.pipe(
  Schema.filter((s) => /^[A-Za-z0-9+/_-]*={0,2}$/.test(s), { message: () => "expected base64" }),
);
const JsonPoint = Schema.Struct({
  elapsed_time: Schema.optionalWith(Int64Json, { default: () => 0n }),
  payload: Schema.optionalWith(Base64Json, { default: () => "" }),
});
const JsonGroup = Schema.Struct({
  data_id: Schema.Struct({
    name: Schema.optionalWith(Schema.String, { default: () => "" }),
    type: Schema.optionalWith(Schema.String, { default: () => "" }),
  }),
  data_points: Schema.optionalWith(Schema.Array(JsonPoint), { default: () => [] }),
});
const JsonChunk = Schema.Struct({
  sequence_number: Schema.Number,
  data_point_groups: Schema.optionalWith(Schema.Array(JsonGroup), { default: () => [] }),
});
const JsonChunks = Schema.Struct({
  meas_uuid: Schema.String,
  sequence_uuid: Schema.String,
  chunks: Schema.optionalWith(Schema.Array(JsonChunk), { default: () => [] }),
});

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).toLowerCase();

/** StoreDataChunks nests 7 levels (chunks, groups, points, ...); far deeper is no upload, and would overflow the stack. */
const MAX_DEPTH = 32;

/** Renames every key (recursively) to snake_case so both proto3 JSON spellings decode alike. */
function snakeKeys(v: unknown, depth = 0): unknown {
  if (v === null || typeof v !== "object") return v;
  if (depth >= MAX_DEPTH) throw new Invalid(`the body is nested too deep (more than ${MAX_DEPTH} levels)`);
  if (Array.isArray(v)) return v.map((x) => snakeKeys(x, depth + 1));
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [snake(k), snakeKeys(x, depth + 1)]));
}

export function decodeStoreDataChunksJson(value: unknown): ChunkUpload {
  const j = decodeOrThrow(JsonChunks, snakeKeys(value), "body");
  return checkUpload({
    measUuid: j.meas_uuid,
    sequenceUuid: j.sequence_uuid,
    chunks: j.chunks.map((c) => ({
      sequenceNumber: c.sequence_number,
      groups: c.data_point_groups.map((g) => ({
        name: g.data_id.name,
        type: g.data_id.type,
        points: g.data_points.map((p) => ({ elapsedNs: p.elapsed_time, payload: Buffer.from(p.payload, "base64") })),
      })),
    })),
  });
}

/** The stored row payload: one StoreDataChunk, encoded. */
export function encodeChunk(c: Chunk): Buffer {
  const msg: pb.IStoreDataChunk = {
    sequenceNumber: c.sequenceNumber,
    dataPointGroups: c.groups.map((g) => ({
      dataId: { name: g.name, type: g.type },
      // A Long keeps int64 exact (a number would round past 2^53).
      dataPoints: g.points.map((p) => ({ elapsedTime: toLong(p.elapsedNs), payload: p.payload })),
    })),
  };
  return Buffer.from(pb.StoreDataChunk.encode(msg).finish());
}

export function decodeChunk(buf: Uint8Array): Chunk {
  return fromPbChunk(pb.StoreDataChunk.decode(buf));
}

export interface DataResponse {
  timeNs: bigint;
  dataType: string;
  dataName: string;
  payload: Uint8Array;
  measurementUuid: string;
  createdAtNs: bigint;
}

export function encodeDataResponse(d: DataResponse): Uint8Array {
  return pb.DataResponseProto.encode({
    time: toTimestamp(d.timeNs),
    dataType: d.dataType,
    dataId: d.dataName,
    dataPayload: d.payload,
    measurementUuid: d.measurementUuid,
    createdAt: toTimestamp(d.createdAtNs),
    dataName: d.dataName,
  }).finish();
}

export function encodeDomainEvent(measUuid: string, occurredAtNs: bigint): Uint8Array {
  return pb.DomainEventProto.encode({
    measUuid,
    occurredAt: toTimestamp(occurredAtNs),
    measurementUpdated: {},
  }).finish();
}

/** The streaming framing of `application/protobuf` responses: 8-byte little-endian length, then the message. */
export function frame(msg: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(8 + msg.length);
  out.writeBigUInt64LE(BigInt(msg.length), 0);
  out.set(msg, 8);
  return out;
}
