// What the durable queue holds, counted per sequence, per measurement and in all: every chunk stored, released
// (acked, uploaded or dropped) or evicted goes through here so the three counts stay in step with LMDB.
import type { QueueEnv } from "./queue-env.js";
import type { Counters, MeasurementRecord, SequenceRecord } from "./records.js";
import type { UncommittedChunks } from "./uncommitted.js";

export interface QueueStats {
  bytes: number;
  chunks: number;
  evictedChunks: number;
  evictedBytes: number;
  /** Chunks released unsent because their sequence had recover: false. */
  droppedChunks: number;
}

export interface SeqState {
  rec: SequenceRecord;
  c: Counters;
}

export interface MeasState {
  rec: MeasurementRecord;
  c: Counters;
}

export class ChunkLedger {
  readonly stats: QueueStats = { bytes: 0, chunks: 0, evictedChunks: 0, evictedBytes: 0, droppedChunks: 0 };
  /** gids removed in a transaction not yet committed (an ack and an eviction may race for one chunk). */
  readonly removing = new Set<number>();
  /** No chunk older than this gid is left: eviction starts here. */
  oldestGid = 1;

  constructor(
    private readonly env: QueueEnv,
    private readonly uncommitted: UncommittedChunks,
    private readonly measurements: Map<string, MeasState>,
    private readonly sequences: Map<number, SeqState>,
  ) {}

  count(s: SeqState, chunks: number, bytes: number): void {
    s.c.chunks += chunks;
    s.c.bytes += bytes;
    const m = this.measurements.get(s.rec.measUuid);
    if (m !== undefined) {
      m.c.chunks += chunks;
      m.c.bytes += bytes;
    }
    this.stats.chunks += chunks;
    this.stats.bytes += bytes;
  }

  /** Releases one chunk (committed or not); undefined when it is unknown or already being removed. */
  release(seqOrd: number, s: SeqState, chunkNo: number): Promise<unknown> | undefined {
    const u = this.uncommitted.get(seqOrd, chunkNo);
    const e = u ? [u.gid, u.value.length] : this.env.index.get([seqOrd, chunkNo]);
    if (e === undefined || this.removing.has(e[0]!)) return undefined;
    return this.removeChunk(s, seqOrd, chunkNo, e[0]!, e[1]!);
  }

  /** Releases every chunk of a sequence. */
  releaseAll(ord: number, s: SeqState): void {
    for (const c of this.env.committed(ord, 0))
      if (!this.removing.has(c.gid)) void this.removeChunk(s, ord, c.chunkNo, c.gid, c.size);
    for (const [no, c] of this.uncommitted.of(ord))
      if (!this.removing.has(c.gid)) void this.removeChunk(s, ord, no, c.gid, c.value.length);
  }

  /** Oldest-first eviction down to `capacityBytes`; committed chunks only. Returns what it evicted. */
  evict(capacityBytes: number): { chunks: number; bytes: number } {
    let chunks = 0;
    let bytes = 0;
    if (this.stats.bytes <= capacityBytes) return { chunks, bytes };
    // Chunks are committed in gid order, so everything before an evicted gid is gone or being removed;
    // what is not committed yet is evicted on a later append.
    for (const c of this.env.chunksFrom(this.oldestGid)) {
      if (this.stats.bytes <= capacityBytes) break;
      const s = this.sequences.get(c.seqOrd);
      if (this.removing.has(c.gid) || s === undefined) continue;
      void this.removeChunk(s, c.seqOrd, c.chunkNo, c.gid, c.size);
      this.oldestGid = c.gid + 1;
      chunks++;
      bytes += c.size;
    }
    this.stats.evictedChunks += chunks;
    this.stats.evictedBytes += bytes;
    return { chunks, bytes };
  }

  private removeChunk(s: SeqState, seqOrd: number, chunkNo: number, gid: number, size: number): Promise<unknown> {
    this.removing.add(gid);
    this.count(s, -1, -size);
    void this.env.remove(this.env.chunks, gid);
    return this.env.remove(this.env.index, [seqOrd, chunkNo]).then(() => this.removing.delete(gid));
  }
}
