// The durable queue's LMDB environment: its four databases, and the rule that nothing is written after
// close() (a late ack or a sender winding down is dropped; the next open rebuilds from what was committed).
import { arch } from "node:os";
import { join } from "node:path";
import { type Database, type Key, type RootDatabase, open } from "lmdb";
import { makeDir, makeLmdbPrivate } from "../private-files.js";
import type { MeasurementRecord, SequenceRecord } from "./records.js";

/** The queue's LMDB file, in `<data>/queue/`. */
export const QUEUE_LMDB = "queue.mdb";

const GiB = 1024 ** 3;

/**
 * The address space the queue's file is mapped into at open, bytes (undefined: lmdb-js's default). lmdb-js
 * otherwise maps 128 KiB and doubles the map as the file grows, keeping every earlier map until the environment
 * closes (a reader may still hold a view into it): each page of the file read through several maps counted
 * several times in the RSS, about twice the file in all. One map as large as the data it is configured to hold
 * (a reservation of addresses, not of disk or memory: the file grows as pages are written) is mapped once;
 * beyond it lmdb-js grows the map as before. At least 1 GiB; at most 16 GiB: an arm64 kernel with 39-bit addresses
 * gives a process 512 GiB in all, and under qemu-user (arm64 on x64, as the package's test runs it) a map of
 * 32 GiB or more ends the process with SIGSEGV where 16 GiB opens. 32-bit processes keep lmdb-js's chunked maps.
 */
export function queueMapBytes(capacityMiB: number): number | undefined {
  if (!arch().endsWith("64")) return undefined;
  return Math.ceil(Math.min(16 * GiB, Math.max(GiB, capacityMiB * 1024 * 1024 * 1.25)) / GiB) * GiB;
}

/** What a write after close() returns: nothing was written. */
const DROPPED = Promise.resolve(false);

export class QueueEnv {
  readonly root: RootDatabase;
  readonly meas: Database<MeasurementRecord, string>;
  readonly seqs: Database<SequenceRecord, number>;
  readonly chunks: Database<Buffer, number>;
  readonly index: Database<[number, number], [number, number]>;
  private closing = false;

  /** `mapBytes`: see queueMapBytes(). */
  constructor(dir: string, mapBytes?: number) {
    // overlappingSync off: a commit returns only once flushed, and a reopen after a crash sees exactly the
    // flushed transactions (with it on, what a reopen sees can change under a running load()).
    makeDir(dir, 0o700);
    // No mapSize key at all without one: lmdb-js takes its defaults over by Object.assign (undefined included).
    const map = mapBytes === undefined ? {} : { mapSize: mapBytes };
    this.root = open({ path: join(dir, QUEUE_LMDB), maxDbs: 8, overlappingSync: false, ...map });
    makeLmdbPrivate(join(dir, QUEUE_LMDB));
    this.meas = this.root.openDB({ name: "meas" });
    this.seqs = this.root.openDB({ name: "seqs" });
    this.chunks = this.root.openDB({ name: "chunks", encoding: "binary" });
    this.index = this.root.openDB({ name: "index" });
  }

  get closed(): boolean {
    return this.closing;
  }

  put<K extends Key, V>(db: Database<V, K>, key: K, value: V): Promise<boolean> {
    return this.closing ? DROPPED : db.put(key, value);
  }

  remove<K extends Key, V>(db: Database<V, K>, key: K): Promise<boolean> {
    return this.closing ? DROPPED : db.remove(key);
  }

  /** Index entries of a sequence's committed chunks after chunk number `after` (at most `limit`), in order. */
  committed(seqOrd: number, after: number, limit = Infinity): Array<{ chunkNo: number; gid: number; size: number }> {
    // Read out before any value is: a cursor step after getBinaryFast would reuse its buffer.
    return [...this.index.getRange({ start: [seqOrd, after + 1], end: [seqOrd + 1], limit })].map(({ key, value }) => ({
      chunkNo: key[1],
      gid: value[0],
      size: value[1],
    }));
  }

  /** A chunk's stored value; `transient`: lmdb's reused buffer, valid until the next read (no copy). */
  chunkValue(gid: number, transient: boolean): Buffer | undefined {
    if (!transient) return this.chunks.getBinary(gid);
    // lmdb's reused buffer only overrides `length`; Node 22+ slices it by its typed-array length (the whole
    // buffer), so the value is cut out here as a view with its own length (still no copy).
    const v = this.chunks.getBinaryFast(gid);
    return v?.subarray(0, v.length);
  }

  /**
   * Committed chunks from gid `start` on, oldest first (gids grow with every append), as their header says:
   * sequence, chunk number and size (read from lmdb's reused buffer before the cursor moves on).
   */
  *chunksFrom(start: number): Generator<{ gid: number; seqOrd: number; chunkNo: number; size: number }> {
    for (;;) {
      let seen = 0;
      for (const gid of this.chunks.getKeys({ start, limit: 256 })) {
        seen++;
        start = gid + 1;
        const v = this.chunks.getBinaryFast(gid);
        if (v !== undefined) yield { gid, seqOrd: v.readUInt32LE(0), chunkNo: v.readUInt32LE(4), size: v.length };
      }
      if (seen === 0) return;
    }
  }

  /** When the oldest committed chunk not in `skip` was stored (ms since the epoch, from its header). */
  oldestChunkTime(skip: ReadonlySet<number>): number | undefined {
    let oldest: number | undefined;
    for (const gid of this.chunks.getKeys())
      if (!skip.has(gid)) {
        oldest = gid;
        break;
      }
    return oldest === undefined ? undefined : this.chunks.getBinaryFast(oldest)?.readDoubleLE(8);
  }

  /** Resolves once everything written so far is on disk. */
  get flushed(): Promise<boolean> {
    return this.root.flushed;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.root.flushed;
    await this.root.close();
  }
}
