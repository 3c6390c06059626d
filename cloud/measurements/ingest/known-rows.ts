// Rows the broker's chunk writer knows to exist, so a steady stream's transaction skips statements that
// would change nothing: the sequence row of each stream (its id) and the data ids already listed.
// Keyed by measurement row (uuid + created_at): a measurement deleted and made again is a new key, and
// its sequences (deleted with it) are not taken for existing. Filled only after a commit; the commit reads the
// measurement rows themselves each time (one statement for all), so a key is only used for the row it names.

/**
 * Measurements remembered at most (least recently used dropped). Every live persisted upstream is one
 * measurement, and the chunks of all of them come round in turn: with fewer entries than live upstreams the
 * LRU misses on every batch, and every commit upserts its sequences and data ids again. An entry is a few
 * hundred bytes with a stream and a data id.
 */
const MAX_MEASUREMENTS = 16_384;
/** Data ids remembered per measurement at most (beyond, the insert-or-ignore simply runs). */
const MAX_IDS = 4096;
/**
 * Streams remembered per measurement at most (least recently written dropped): each new upstream of a
 * measurement is a new stream, and one that runs for weeks through agent restarts would otherwise keep them all.
 */
const MAX_STREAMS = 256;

export interface Known {
  seqs: Map<string, number>;
  ids: Set<string>;
}

export const dataIdKey = (type: string, name: string) => `${type}\u0000${name}`;

export class KnownRows {
  private readonly byMeasurement = new Map<string, Known>();

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
      if (this.byMeasurement.size > MAX_MEASUREMENTS)
        this.byMeasurement.delete(this.byMeasurement.keys().next().value!);
    }
    k.seqs.delete(streamId); // re-inserted: Map order is then least recently written first
    k.seqs.set(streamId, seqId);
    if (k.seqs.size > MAX_STREAMS) k.seqs.delete(k.seqs.keys().next().value!);
    for (const id of ids) if (k.ids.size < MAX_IDS) k.ids.add(id);
  }

  /** A transaction failed: what it relied on may not hold. */
  forget(key: string): void {
    this.byMeasurement.delete(key);
  }
}
