// The chunks waiting for one group commit (upstream-store.ts), grouped by stream as they arrive, and what a
// commit needs of them: their stored form, their bytes, and the reused buffers of their payloads.
import { BufferPool, POOLED_MIN } from "../../../proto/wire/buffer-pool.js";
import type { Chunk } from "../formats/codec.js";
import type { RawChunk } from "../formats/raw-chunk.js";
import type { ChunkResult } from "../storage/chunk-write.js";
import type { StreamChunks } from "./shared-commit.js";
import type { UpstreamChunkIn, UpstreamRef } from "./upstream-store.js";

/** One stream's chunks in a batch, and where each is in the batch (its answer's index). */
interface BatchStream {
  s: StreamChunks & { chunks: Array<Chunk | RawChunk> };
  at: number[];
}

/**
 * The chunks of one group commit, grouped by stream as they arrive (by the broker's stream object: no key made per
 * chunk). Every chunk's answer waits on the batch's one promise, settled once the commit is done: no promise of
 * its own to make and settle per chunk.
 */
export class Batch {
  readonly streams = new Map<UpstreamRef, BatchStream>();
  /** Chunks in the batch. */
  count = 0;
  /** Per chunk: its answer, or the refusal of its stream's chunks (set before `done` settles). */
  readonly results: Array<ChunkResult | Error> = [];
  /** Lets go of the received frames the chunks' views read (received-frames.ts), once the batch settled. */
  readonly releases: Array<() => void> = [];
  /** About the bytes of its chunks (bytesOf). */
  bytes = 0;
  /** The most bytes of one of its chunks. */
  largest = 0;
  settle!: (failure?: unknown) => void;
  readonly done = new Promise<void>(
    (resolve, reject) => (this.settle = (failure) => (failure === undefined ? resolve() : reject(failure))),
  );
  constructor() {
    this.done.catch(() => undefined); // heard by each chunk's answer
  }
  add(up: UpstreamRef, c: Chunk | RawChunk): number {
    let e = this.streams.get(up);
    if (e === undefined) this.streams.set(up, (e = { s: { up, chunks: [] }, at: [] }));
    e.s.chunks.push(c);
    e.at.push(this.count);
    return this.count++;
  }
  answer(i: number): Promise<ChunkResult> {
    return this.done.then(() => {
      const r = this.results[i]!;
      if (r instanceof Error) throw r;
      return r;
    });
  }
}

/** The batch's streams, those the broker gave as two objects (a stream taken over again) made one. */
export function streamsOf(b: Batch): BatchStream[] {
  const all = [...b.streams.values()];
  if (all.length < 2) return all;
  const byKey = new Map<string, BatchStream>();
  for (const e of all) {
    const key = `${e.s.up.sessionId} ${e.s.up.streamId}`.toLowerCase();
    const same = byKey.get(key);
    if (same === undefined) byKey.set(key, e);
    else
      for (let j = 0; j < e.at.length; j++) {
        same.s.chunks.push(e.s.chunks[j]!);
        same.at.push(e.at[j]!);
      }
  }
  return byKey.size === all.length ? all : [...byKey.values()];
}

/**
 * A commit's chunks at most, by bytes and by count (a backlog beyond is committed in several). Bounded by bytes
 * rather than by a small count on purpose: a commit costs about a page write per stream in each index whatever
 * the stream's chunks in it (a stream's new rows share its index pages), so when storage falls behind, larger
 * commits store a backlog with less work per chunk instead of falling further behind.
 */
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;
export const MAX_BATCH_CHUNKS = 16_384;

/** About what a chunk adds to its commit (payload bytes, and a little per point). */
export const bytesOf = (chunk: UpstreamChunkIn) => {
  let n = 64;
  for (const g of chunk.dataPointGroups) {
    if (g.raw !== undefined) n += g.raw.payloadBytes + 16 * g.raw.count;
    else for (const p of g.dataPoints) n += p.payload.length + 16;
  }
  return n;
};

/** The chunk as stored: received bytes as they are when every group has them (iSCP enc=proto), else its points. */
export function chunkOf(chunk: UpstreamChunkIn): Chunk | RawChunk {
  const groups = chunk.dataPointGroups;
  let raw = true;
  for (const g of groups) if (g.raw === undefined) raw = false;
  if (raw) {
    const rawGroups: RawChunk["rawGroups"] = new Array(groups.length);
    for (let k = 0; k < groups.length; k++) {
      const g = groups[k]!;
      rawGroups[k] = { name: g.dataId.name, type: g.dataId.type, points: g.raw! };
    }
    return { sequenceNumber: chunk.sequenceNumber, rawGroups };
  }
  return {
    sequenceNumber: chunk.sequenceNumber,
    groups: groups.map((g) => ({
      name: g.dataId.name,
      type: g.dataId.type,
      points: g.dataPoints.map((p) => ({ elapsedNs: p.elapsedTime, payload: p.payload })),
    })),
  };
}

/** Buffers for received chunks' stored payloads, reused batch after batch (buffer-pool.ts). */
const payloadBuffers = new BufferPool();

/** A batch's payload buffers: taken while it is prepared, all given back once its writes settled. */
export function leasePayloads(): { alloc: (n: number) => Buffer; release: () => void } {
  const taken: Buffer[] = [];
  return {
    alloc: (n) => {
      const b = payloadBuffers.take(n);
      if (n >= POOLED_MIN) taken.push(b);
      return b;
    },
    release: () => {
      for (const b of taken) payloadBuffers.give(b);
    },
  };
}
