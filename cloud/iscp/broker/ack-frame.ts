// An UpstreamChunkAck of results only, encoded by hand (enc=proto): a fleet of edges gets about one ack per chunk
// commit per stream, and protobufjs's writer (an object per field, a fork per nested message) was a large share
// of the broker's work for them. Acks with data-ID aliases, and JSON clients, go through encodeMessage.
import type { iscp2 } from "../../../proto/wire/message.js";
import { putVarint32, varintSize } from "../../../proto/wire/varint.js";

/** Message.upstream_chunk_ack is field 71, length-delimited: (71 << 3) | 2 as a varint. */
const ACK_TAG = [0xba, 0x04];
const OK = "OK";

const strBytes = (s: string) => (s === OK ? 2 : Buffer.byteLength(s));

/** `Message{upstream_chunk_ack: {stream_id_alias, results}}`, as protobufjs would write it. */
export function encodeResultsAck(streamIdAlias: number, results: readonly iscp2.IUpstreamChunkResult[]): Uint8Array {
  let body = 1 + varintSize(streamIdAlias);
  const sizes = new Array<number>(results.length);
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    const str = r.resultString ?? "";
    const n = strBytes(str);
    const size = 1 + varintSize(r.sequenceNumber ?? 0) + 1 + varintSize(r.resultCode ?? 0) + 1 + varintSize(n) + n;
    sizes[i] = size;
    body += 1 + varintSize(size) + size;
  }
  const out = Buffer.allocUnsafe(2 + varintSize(body) + body);
  out[0] = ACK_TAG[0]!;
  out[1] = ACK_TAG[1]!;
  let p = putVarint32(out, 2, body);
  out[p++] = 0x08;
  p = putVarint32(out, p, streamIdAlias);
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    const str = r.resultString ?? "";
    out[p++] = 0x12;
    p = putVarint32(out, p, sizes[i]!);
    out[p++] = 0x08;
    p = putVarint32(out, p, r.sequenceNumber ?? 0);
    out[p++] = 0x10;
    p = putVarint32(out, p, r.resultCode ?? 0);
    out[p++] = 0x1a;
    const n = strBytes(str);
    p = putVarint32(out, p, n);
    if (str === OK) {
      out[p++] = 0x4f;
      out[p++] = 0x4b;
    } else {
      p += out.write(str, p, "utf8");
    }
  }
  return out;
}
