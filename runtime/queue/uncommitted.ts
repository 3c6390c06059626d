// Chunks appended to the queue whose write transaction has not committed yet, per sequence. The real-time
// sender reads them from here, so a chunk goes out while its commit runs instead of after it (the commit
// still decides when its points count as accepted), and an ack that overtakes the commit still releases it.
export interface Uncommitted {
  gid: number;
  /** The value handed to LMDB (header + chunk); never written to again. */
  value: Buffer;
}

export class UncommittedChunks {
  private readonly bySeq = new Map<number, Map<number, Uncommitted>>();

  add(seqOrd: number, chunkNo: number, c: Uncommitted): void {
    let m = this.bySeq.get(seqOrd);
    if (m === undefined) this.bySeq.set(seqOrd, (m = new Map()));
    m.set(chunkNo, c);
  }

  /** Its transaction committed: readers find it in LMDB from now on. */
  committed(seqOrd: number, chunkNo: number): void {
    const m = this.bySeq.get(seqOrd);
    if (m === undefined) return;
    m.delete(chunkNo);
    if (m.size === 0) this.bySeq.delete(seqOrd);
  }

  get(seqOrd: number, chunkNo: number): Uncommitted | undefined {
    return this.bySeq.get(seqOrd)?.get(chunkNo);
  }

  /** The sequence's uncommitted chunks in chunk-number order (appends come in that order). */
  of(seqOrd: number): Iterable<[number, Uncommitted]> {
    return this.bySeq.get(seqOrd) ?? [];
  }
}
