// Records the durable queue keeps in LMDB, and the bookkeeping it reports.

export interface MeasurementRecord {
  uuid: string;
  /** Order in which measurements were taken (deferred upload goes oldest first). */
  ord: number;
  /** Base time: epoch nanoseconds as a decimal string (exact beyond 2^53). */
  baseTimeNs: string;
  /** When the agent registered it (ms since epoch). */
  createdAt: number;
  /** Streaming stopped: no more data will be added. */
  ended: boolean;
  /**
   * Some of its chunks went by deferred upload, and the cloud has not yet been told its sequences'
   * totals and that it is complete (done once it has ended and nothing is left to upload).
   */
  owesCompletion?: boolean;
}

export interface SequenceRecord {
  ord: number;
  /** Sequence UUID on the server (the iSCP upstream id for real-time sequences). */
  uuid: string;
  measUuid: string;
  /** Upstream id, or `deferred`. */
  destId: string;
  recover: boolean;
  /** Sent in real time by an upstream (false: the `deferred` destination, uploaded by REST only). */
  realtime: boolean;
  /** Number of the last chunk appended (chunks are numbered from 1): the final sequence number. */
  lastChunkNo: number;
  /** Points appended in total: the expected data points. */
  points: number;
  /** No real-time sender owns it any more: its chunks are the deferred upload's. */
  closed: boolean;
}

export interface MeasurementInfo extends MeasurementRecord {
  /** Chunks stored locally, not yet acknowledged or uploaded. */
  chunkCount: number;
  /** Bytes of those chunks. */
  pendingDataSize: number;
}

export interface Counters {
  chunks: number;
  bytes: number;
}

export function newCounters(): Counters {
  return { chunks: 0, bytes: 0 };
}
