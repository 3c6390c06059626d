// Rows the broker's chunk writer knows to exist, so a steady stream's transaction skips statements that
// would change nothing: the sequence row of each stream (its id) and the data ids already listed.
// Keyed by measurement row (uuid + created_at): a measurement deleted and made again is a new key, and
// its sequences (deleted with it) are not taken for existing. Filled only after a commit. The measurement row
// itself is remembered too (while neither ended nor completed), for the one-script transaction (chunk-script.ts).
import type { KnownMeasurement } from "../repo/chunk-script.js";

/**
 * Measurements remembered at most (least recently used dropped). Every live persisted upstream is one
 * measurement, and the chunks of all of them come round in turn: with fewer entries than live upstreams the
 * LRU misses on every batch, and every batch falls back to the per-statement transaction (at 256, 300 edges at
 * 100 points/s got no ack within seconds). An entry is a few hundred bytes with a stream and a data id.
 */
const MAX_MEASUREMENTS = 16_384;
/** Data ids remembered per measurement at most (beyond, the insert-or-ignore simply runs). */
const MAX_IDS = 4096;

export interface Known {
  seqs: Map<string, number>;
  ids: Set<string>;
}

export const dataIdKey = (type: string, name: string) => `${type}\u0000${name}`;

export class KnownRows {
  private readonly byMeasurement = new Map<string, Known>();
  /** By measurement uuid: the row as last committed (its key is `${uuid} ${createdAt}`). */
  private readonly rows = new Map<string, KnownMeasurement>();

  /** What is known of a measurement row (touches it as recently used). */
  of(key: string): Known | undefined {
    const k = this.byMeasurement.get(key);
    if (k !== undefined) {
      this.byMeasurement.delete(key);
      this.byMeasurement.set(key, k);
    }
    return k;
  }

  /** After a commit: the stream's sequence row and these data ids exist. */
  learn(key: string, streamId: string, seqId: number, ids: readonly string[]): void {
    let k = this.of(key);
    if (k === undefined) {
      k = { seqs: new Map(), ids: new Set() };
      this.byMeasurement.set(key, k);
      if (this.byMeasurement.size > MAX_MEASUREMENTS) this.byMeasurement.delete(this.byMeasurement.keys().next().value!);
    }
    k.seqs.set(streamId, seqId);
    for (const id of ids) if (k.ids.size < MAX_IDS) k.ids.add(id);
  }

  /** The measurement row a commit found neither ended nor completed (undefined: it may not be taken as known). */
  learnRow(uuid: string, row: KnownMeasurement | undefined): void {
    this.rows.delete(uuid);
    if (row === undefined) return;
    this.rows.set(uuid, row);
    if (this.rows.size > MAX_MEASUREMENTS) this.rows.delete(this.rows.keys().next().value!);
  }

  rowOf(uuid: string): KnownMeasurement | undefined {
    return this.rows.get(uuid);
  }

  /** A transaction failed: what it relied on may not hold. */
  forget(key: string): void {
    this.byMeasurement.delete(key);
    this.rows.delete(key.slice(0, key.indexOf(" ")));
  }
}
