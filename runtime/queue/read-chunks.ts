// Reading a sequence's chunks in order across the two places they are: LMDB, and the chunks appended but
// not yet committed (uncommitted.ts), which the real-time sender takes while their commit runs.
import type { QueueEnv } from "./queue-env.js";
import type { UncommittedChunks } from "./uncommitted.js";

/** The store's header before each chunk value (u32 seqOrd, u32 chunkNo, f64 createdAt ms). */
export const CHUNK_HEADER = 16;

export interface StoredChunk {
  chunkNo: number;
  /** The encoded chunk (see chunk-codec.ts), without the store's header. */
  data: Buffer;
  createdAt: number;
}

export interface ChunkSources {
  env: QueueEnv;
  uncommitted: UncommittedChunks;
  /** gids removed in a transaction not yet committed: no longer handed out. */
  removing: ReadonlySet<number>;
}

/**
 * Up to `limit` chunks of a sequence after chunk number `after`, in order, committed or not. `last`: the
 * sequence's last chunk number appended, when known. `transient` (one chunk): the data is not copied and is
 * valid until the next read.
 */
export function readChunks(
  src: ChunkSources,
  seqOrd: number,
  after: number,
  limit: number,
  transient: boolean,
  last?: number,
): StoredChunk[] {
  const out: StoredChunk[] = [];
  const view = transient && limit === 1;
  const add = (chunkNo: number, v: Buffer) => {
    out.push({ chunkNo, createdAt: v.readDoubleLE(8), data: v.subarray(CHUNK_HEADER) });
    after = chunkNo;
  };
  // An uncommitted chunk's buffer is reused once it commits: a copy unless the read is transient.
  const addUncommitted = (chunkNo: number, v: Buffer) => add(chunkNo, view ? v : Buffer.from(v));
  // Real time keeping up asks for the chunk just appended, then the next: both answered without an LMDB read.
  for (
    let c = src.uncommitted.get(seqOrd, after + 1);
    c !== undefined && out.length < limit && !src.removing.has(c.gid);
  ) {
    addUncommitted(after + 1, c.value);
    c = src.uncommitted.get(seqOrd, after + 1);
  }
  if (out.length >= limit || (last !== undefined && after >= last)) return out;
  for (const { chunkNo, gid } of src.env.committed(seqOrd, after, limit - out.length)) {
    const v = src.removing.has(gid) ? undefined : src.env.chunkValue(gid, view);
    if (v !== undefined) add(chunkNo, v);
  }
  // A chunk whose commit just completed may still be listed as uncommitted: `after` skips it.
  for (const [no, c] of src.uncommitted.of(seqOrd)) {
    if (out.length >= limit) break;
    if (no > after && !src.removing.has(c.gid)) addUncommitted(no, c.value);
  }
  return out;
}
