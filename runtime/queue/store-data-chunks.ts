// Deferred upload's request bodies: stored chunks of one sequence as protobuf `StoreDataChunks`
// (REST POST .../measurements/sequences/chunks), about 1 MB per request. A stored chunk's number is its
// `sequence_number`, so a chunk the server already has comes back `skipped` and re-uploading is harmless.
import { pb } from "../../proto/gen/pb.js";
import { chunkGroups, decodeChunk } from "./chunk-codec.js";
import type { DurableQueue } from "./store.js";

export interface UploadBatch {
  /** Encoded StoreDataChunks. */
  body: Uint8Array;
  /** Chunk numbers in the body: ack them when the server answers ok or skipped. */
  chunkNos: number[];
  points: number;
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
  const chunks: pb.IStoreDataChunk[] = [];
  const chunkNos: number[] = [];
  let bytes = 0;
  let points = 0;
  let cursor = after;
  for (;;) {
    const [c] = queue.readChunks(seqOrd, cursor, 1);
    if (c === undefined || (chunks.length > 0 && bytes + c.data.length > maxBytes)) break;
    cursor = c.chunkNo;
    const decoded = decodeChunk(c.data);
    chunks.push({
      sequenceNumber: c.chunkNo,
      dataPointGroups: chunkGroups(decoded).map((g) => ({
        dataId: { name: g.dataId.name, type: g.dataId.type },
        dataPoints: g.points.map((p) => ({ elapsedTime: p.elapsedNs, payload: p.payload })),
      })),
    });
    chunkNos.push(c.chunkNo);
    bytes += c.data.length;
    points += decoded.count;
  }
  if (chunks.length === 0) return undefined;
  const body = pb.StoreDataChunks.encode({ measUuid: seq.measUuid, sequenceUuid: seq.uuid, chunks }).finish();
  return { body, chunkNos, points };
}
