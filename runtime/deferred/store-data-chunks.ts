// Deferred upload's request bodies: stored chunks of one sequence as protobuf `StoreDataChunks`
// (REST POST .../measurements/sequences/chunks), about 1 MB per request. A stored chunk's number is its
// `sequence_number`, so a chunk the server already has comes back `skipped` and re-uploading is harmless.
// The body is written from the stored spans (chunk-codec.ts): a stored entry is an iSCP `DataPoint`, the same
// message as `StoreDataPoint`, so only its tag changes (DataPointGroup.data_points = 3, StoreDataPointGroup = 2).
//   StoreDataChunks     meas_uuid = 1, sequence_uuid = 2, chunks = 3 (LEN, repeated)
//   StoreDataChunk      sequence_number = 1, data_point_groups = 2 (LEN, repeated)
//   StoreDataPointGroup data_id = 1 (LEN: StoreDataID name = 1, type = 2), data_points = 2 (LEN, repeated)
import { lenField, retagEntries } from "../../proto/wire/pb-bits.js";
import { len32, putVarint32 } from "../../proto/wire/varint.js";
import { chunkView } from "../queue/chunk-codec.js";
import { dataIdSize, writeDataId, type ChunkView, type GroupSpan } from "../../proto/wire/chunk-view.js";
import type { DurableQueue } from "../queue/store.js";

export interface UploadBatch {
  /** Encoded StoreDataChunks. */
  body: Uint8Array;
  /** Chunk numbers in the body: ack them when the server answers ok or skipped (none: only unreadable ones). */
  chunkNos: number[];
  points: number;
  /** Stored chunks that cannot be read (corrupt): left out, for the caller to release and report. */
  unreadable: number[];
}

const groupBody = (g: GroupSpan) => lenField(dataIdSize(g)) + (g.end - g.start);
const chunkBody = (no: number, v: ChunkView) =>
  1 + len32(no) + v.groups.reduce((n, g) => n + lenField(groupBody(g)), 0);

/** Writes one chunk's StoreDataChunk (with its field tag and length) at p; returns the position after it. */
function writeChunk(out: Buffer, p: number, no: number, v: ChunkView): number {
  out[p++] = 0x1a;
  p = putVarint32(out, p, chunkBody(no, v));
  out[p++] = 0x08;
  p = putVarint32(out, p, no);
  for (const g of v.groups) {
    out[p++] = 0x12;
    p = putVarint32(out, p, groupBody(g));
    out[p++] = 0x0a;
    p = writeDataId(out, p, v.buffer, g);
    const start = p;
    p += v.buffer.copy(out, p, g.start, g.end);
    retagEntries(out, start, p, 0x12);
  }
  return p;
}

/**
 * The next batch of a sequence's stored chunks after chunk number `after`; undefined when none is left.
 * A batch holds at least one chunk and stops before exceeding `maxBytes` of stored chunk data.
 */
export function nextUploadBatch(
  queue: DurableQueue,
  seqOrd: number,
  after = 0,
  maxBytes = 1024 * 1024,
): UploadBatch | undefined {
  const seq = queue.getSequence(seqOrd);
  if (seq === undefined) return undefined;
  const chunks: Array<[number, ChunkView]> = [];
  let bytes = 0;
  let points = 0;
  let cursor = after;
  const unreadable: number[] = [];
  for (;;) {
    const [c] = queue.readChunks(seqOrd, cursor, 1);
    if (c === undefined || (chunks.length > 0 && bytes + c.data.length > maxBytes)) break;
    cursor = c.chunkNo;
    let v: ChunkView;
    try {
      v = chunkView(c.data);
    } catch {
      unreadable.push(c.chunkNo);
      continue;
    }
    chunks.push([c.chunkNo, v]);
    bytes += c.data.length;
    points += v.count;
  }
  if (chunks.length === 0)
    return unreadable.length > 0 ? { body: new Uint8Array(0), chunkNos: [], points: 0, unreadable } : undefined;
  const meas = Buffer.from(seq.measUuid, "utf8");
  const uuid = Buffer.from(seq.uuid, "utf8");
  const size =
    lenField(meas.length) + lenField(uuid.length) + chunks.reduce((n, [no, v]) => n + lenField(chunkBody(no, v)), 0);
  const body = Buffer.allocUnsafe(size);
  body[0] = 0x0a;
  let p = putVarint32(body, 1, meas.length);
  p += meas.copy(body, p);
  body[p++] = 0x12;
  p = putVarint32(body, p, uuid.length);
  p += uuid.copy(body, p);
  for (const [no, v] of chunks) p = writeChunk(body, p, no, v);
  if (p !== size) throw new Error(`upload body size mismatch: wrote ${p} of ${size}`);
  return { body, chunkNos: chunks.map(([no]) => no), points, unreadable };
}
