// A stored chunk (chunk-view.ts) straight to the protobuf bytes of one iSCP
// `Message { upstream_chunk }`: the chunk keeps each group's `data_points` entries as iSCP bytes, so this
// sizes and copies a span per data id (nothing per point). The bytes are those protobufjs writes for the same chunk
// built as objects (ClientUpstream's object path): every field it sets is written, in field order.
//
//   Message        upstream_chunk = 70 (LEN)
//   UpstreamChunk  stream_id_alias = 1, stream_chunk = 2 (LEN), data_ids = 3 (LEN, repeated)
//   StreamChunk    sequence_number = 1, data_point_groups = 2 (LEN, repeated)
//   DataPointGroup data_id = 1 (LEN) | data_id_alias = 2, data_points = 3 (LEN, repeated)
//   DataPoint      elapsed_time = 1 (sint64, ZigZag), payload = 2 (LEN)
//   DataID         name = 1, type = 2 (strings)
import { lenField } from "./pb-bits.js";
import { len32, putVarint32 as varint } from "./varint.js";
import { dataIdSize, writeDataId, type ChunkView, type DataId } from "./chunk-view.js";

export interface ChunkFrameOptions {
  streamIdAlias: number;
  sequenceNumber: number;
  /** The broker's alias for a data id, if known (0 counts as none, as on the object path). */
  aliasOf(name: string, type: string): number | undefined;
}

export interface ChunkFrame {
  /** The whole encoded Message. */
  frame: Uint8Array;
  points: number;
  /** Data ids sent by name (no alias yet), listed in `data_ids` so that the broker assigns aliases. */
  askIds: DataId[];
}

// Per-group scratch, reused across calls (grown, never shrunk): group body size, alias (0: none).
let groupSize = new Float64Array(64);
let aliasOfId = new Uint32Array(64);

/** The stored chunk as one iSCP Message: the groups' entries are copied as they are stored. */
export function encodeUpstreamChunkMessage(
  chunk: ChunkView,
  o: ChunkFrameOptions,
  alloc: (n: number) => Buffer = Buffer.allocUnsafe,
): ChunkFrame {
  const groups = chunk.groups;
  const n = groups.length;
  if (groupSize.length < n) {
    const size = Math.max(n, groupSize.length * 2);
    groupSize = new Float64Array(size);
    aliasOfId = new Uint32Array(size);
  }
  const askIds: DataId[] = [];
  let askBytes = 0;
  let groupsBytes = 0;
  for (let i = 0; i < n; i++) {
    const g = groups[i]!;
    const alias = o.aliasOf(g.dataId.name, g.dataId.type) ?? 0;
    aliasOfId[i] = alias;
    const body = dataIdSize(g);
    let size = g.end - g.start;
    if (alias !== 0) size += 1 + len32(alias);
    else {
      size += lenField(body);
      askIds.push(g.dataId);
      askBytes += lenField(body);
    }
    groupSize[i] = size;
    groupsBytes += lenField(size);
  }
  const seq = o.sequenceNumber >>> 0;
  const alias = o.streamIdAlias >>> 0;
  const streamChunk = 1 + len32(seq) + groupsBytes;
  const upstreamChunk = 1 + len32(alias) + lenField(streamChunk) + askBytes;
  const total = 2 + len32(upstreamChunk) + upstreamChunk;

  const out = alloc(total);
  out[0] = 0xb2; // field 70, LEN
  out[1] = 0x04;
  let p = varint(out, 2, upstreamChunk);
  out[p++] = 0x08;
  p = varint(out, p, alias);
  out[p++] = 0x12;
  p = varint(out, p, streamChunk);
  out[p++] = 0x08;
  p = varint(out, p, seq);
  for (let i = 0; i < n; i++) {
    const g = groups[i]!;
    out[p++] = 0x12;
    p = varint(out, p, groupSize[i]!);
    if (aliasOfId[i] !== 0) {
      out[p++] = 0x10;
      p = varint(out, p, aliasOfId[i]!);
    } else {
      out[p++] = 0x0a;
      p = writeDataId(out, p, chunk.buffer, g);
    }
    p += chunk.buffer.copy(out, p, g.start, g.end);
  }
  for (let i = 0; i < n; i++) {
    if (aliasOfId[i] !== 0) continue;
    out[p++] = 0x1a;
    p = writeDataId(out, p, chunk.buffer, groups[i]!);
  }
  if (p !== total) throw new Error(`chunk frame size mismatch: wrote ${p} of ${total}`);
  return { frame: out, points: chunk.count, askIds };
}
