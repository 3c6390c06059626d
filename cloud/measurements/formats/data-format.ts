// Per-point output of the data endpoint, hand-built for speed: what is shared by the points of one
// data-point group (measurement, data ID, created_at) is rendered once per group and reused.
import { encodeDataResponse, frame } from "./codec.js";
import { jsonTime, type TimeFormat } from "./time.js";
import { putVarint, varintSize } from "../../../proto/wire/varint.js";

/** The points of one group of one stored chunk share these. */
export interface GroupCtx {
  measUuid: string;
  type: string;
  name: string;
  createdAtMs: number;
  json?: string;
  pbTail?: Buffer;
}

/** `data_name` repeats `data_id` for iSCP v2 data: the intdash SDK's lessons read that key. */
export function jsonLine(g: GroupCtx, timeNs: bigint, payload: Uint8Array, tf: TimeFormat): string {
  g.json ??=
    `,"measurement_uuid":"${g.measUuid}","created_at":"${new Date(g.createdAtMs).toISOString()}",` +
    `"data_type":${JSON.stringify(g.type)},"data_id":${JSON.stringify(g.name)},"data_name":${JSON.stringify(g.name)},"data":{"d":"`;
  return `{"time":${jsonTime(timeNs, tf)}${g.json}${Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("base64")}"}}\n`;
}

// ---- DataResponseProto, written directly (field order does not matter to protobuf decoders) ----

/** google.protobuf.Timestamp {seconds = 1 (int64), nanos = 2 (int32)} body, for non-negative times. */
function timestampBody(ns: bigint): { sec: number; nanos: number; size: number } {
  const sec = Number(ns / 1_000_000_000n);
  const nanos = Number(ns % 1_000_000_000n);
  const size = (sec ? 1 + varintSize(sec) : 0) + (nanos ? 1 + varintSize(nanos) : 0);
  return { sec, nanos, size };
}

function putTimestamp(
  buf: Buffer,
  off: number,
  field: number,
  t: { sec: number; nanos: number; size: number },
): number {
  buf[off++] = (field << 3) | 2;
  off = putVarint(buf, off, t.size);
  if (t.sec) (buf[off++] = 0x08), (off = putVarint(buf, off, t.sec));
  if (t.nanos) (buf[off++] = 0x10), (off = putVarint(buf, off, t.nanos));
  return off;
}

function stringField(field: number, s: string): Buffer {
  const body = Buffer.from(s, "utf8");
  if (body.length === 0) return Buffer.alloc(0);
  const head = Buffer.allocUnsafe(1 + varintSize(body.length));
  head[0] = (field << 3) | 2;
  putVarint(head, 1, body.length);
  return Buffer.concat([head, body]);
}

/** data_type = 2, data_id = 3, measurement_uuid = 5, created_at = 6, data_name = 7. */
function pbTail(g: GroupCtx): Buffer {
  const created = timestampBody(BigInt(g.createdAtMs) * 1_000_000n);
  const ts = Buffer.allocUnsafe(2 + varintSize(created.size) + created.size);
  const tsLen = putTimestamp(ts, 0, 6, created);
  return Buffer.concat([
    stringField(2, g.type),
    stringField(3, g.name),
    stringField(5, g.measUuid),
    ts.subarray(0, tsLen),
    stringField(7, g.name),
  ]);
}

/** One 8-byte little-endian length prefix + DataResponseProto {time = 1, data_payload = 4, ...group fields}. */
export function dataFrame(g: GroupCtx, timeNs: bigint, payload: Uint8Array): Buffer {
  // Times before 1970 need negative varints: rare, so the generic encoder handles them.
  if (timeNs < 0n)
    return frame(
      encodeDataResponse({
        timeNs,
        dataType: g.type,
        dataName: g.name,
        payload,
        measurementUuid: g.measUuid,
        createdAtNs: BigInt(g.createdAtMs) * 1_000_000n,
      }),
    );
  const tail = (g.pbTail ??= pbTail(g));
  const t = timestampBody(timeNs);
  const timeSize = 1 + varintSize(t.size) + t.size;
  const payloadSize = payload.length ? 1 + varintSize(payload.length) + payload.length : 0;
  const len = timeSize + payloadSize + tail.length;
  const buf = Buffer.allocUnsafe(8 + len);
  buf.writeUInt32LE(len, 0);
  buf.writeUInt32LE(0, 4);
  let off = 8;
  off = putTimestamp(buf, off, 1, t);
  if (payload.length) {
    buf[off++] = (4 << 3) | 2;
    off = putVarint(buf, off, payload.length);
    buf.set(payload, off);
    off += payload.length;
  }
  tail.copy(buf, off);
  return buf;
}
