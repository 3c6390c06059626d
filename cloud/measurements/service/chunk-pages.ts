// A measurement's chunks in pages of rows in time order (repo/data.ts), each page after the last row's key, every
// chunk once although compactions run between the pages. A compaction moves log rows into packs placed at their
// first chunk: a pack made of rows from both sides of the key sorts before the key (or, among chunks of one time
// in descending order, after it), so paging by key alone would skip its chunks after the key or give again those
// before it. The read keeps which chunks it took from the log; a page also gives the packs now holding any of
// them, and of those only the chunks past the key are taken. A pack made before the read holds none of them: it
// is read whole, once, where it sorts.
import type { Queryable } from "../../database/db.js";
import { chunkPage, chunksOf, type ChunkKey, type ChunkRow } from "../repo/data.js";

/** A row of a page: the bound no later row's point comes before (after, in descending order), and its chunks. */
export interface PageRow {
  bound: number;
  /** In the order of the read: descending order takes a pack's chunks last number first. */
  chunks: ChunkRow[];
}

export interface PagesQuery {
  measUuid: string;
  desc: boolean;
  /** Elapsed-time window [from, to) relative to the measurement's base time, in ns. */
  from?: number;
  to?: number;
  /** Rows per page. */
  limit: number;
}

/** The pages of a measurement's chunk rows (a page may be empty when its rows were all read before). */
export async function* chunkPages(db: Queryable, q: PagesQuery): AsyncGenerator<PageRow[]> {
  const fromLog = new NumberRuns();
  const inOrder = (chunks: ChunkRow[]) => (q.desc ? chunks.reverse() : chunks);
  const lead = (r: ChunkRow) => (q.desc ? r.max_elapsed_ns : r.min_elapsed_ns);
  let after: ChunkKey | undefined;
  for (;;) {
    const key = after;
    const rows = await chunkPage(db, { ...q, after: key, readFromLog: fromLog.runs() });
    const page: PageRow[] = [];
    /** Packs given ahead of the page (`sequence number`): the page's own copy of one is left out. */
    const repacked = new Set<string>();
    let last: ChunkRow | undefined;
    let count = 0;
    for (const row of rows) {
      const id = `${row.sequence_id} ${row.sequence_number}`;
      if (row.repacked) {
        // A pack holding several runs comes once per run.
        if (repacked.has(id)) continue;
        repacked.add(id);
        fromLog.remove(row.sequence_id, row.sequence_number, row.last_number ?? row.sequence_number);
        // Its chunks up to the key were read (from the log); those past it were not. The read has released its
        // points up to the key, and none of these is before it.
        const unread = chunksOf(row).filter((c) => past(key!, [lead(c), c.sequence_id, c.sequence_number], q.desc));
        if (unread.length > 0) page.push({ bound: key![0], chunks: inOrder(unread) });
        continue;
      }
      last = row;
      count++;
      if (repacked.has(id)) continue;
      if (row.in_log) fromLog.add(row.sequence_id, row.sequence_number);
      page.push({ bound: lead(row), chunks: inOrder(chunksOf(row)) });
    }
    yield page;
    if (count < q.limit || last === undefined) return;
    after = [lead(last), last.sequence_id, last.sequence_number];
  }
}

/** Whether key `k` comes after `key` in the read's order. */
function past(key: ChunkKey, k: ChunkKey, desc: boolean): boolean {
  for (let i = 0; i < 3; i++) if (k[i] !== key[i]) return desc ? k[i]! < key[i]! : k[i]! > key[i]!;
  return false;
}

/** Sets of numbers per sequence, kept as sorted runs of consecutive numbers. */
class NumberRuns {
  private readonly bySequence = new Map<number, Array<[number, number]>>();

  add(seq: number, n: number): void {
    const runs = this.bySequence.get(seq) ?? this.bySequence.set(seq, []).get(seq)!;
    // The first run starting after n (a read takes a sequence's numbers mostly in order: usually the end).
    let i = runs.length;
    while (i > 0 && runs[i - 1]![0] > n) i--;
    const before = runs[i - 1];
    const next = runs[i];
    if (before && before[1] >= n) return;
    const joinsBefore = before !== undefined && before[1] + 1 === n;
    const joinsNext = next !== undefined && next[0] - 1 === n;
    if (joinsBefore && joinsNext) {
      before[1] = next[1];
      runs.splice(i, 1);
    } else if (joinsBefore) before[1] = n;
    else if (joinsNext) next[0] = n;
    else runs.splice(i, 0, [n, n]);
  }

  /** Takes out the numbers first..last of sequence `seq`. */
  remove(seq: number, first: number, last: number): void {
    const runs = this.bySequence.get(seq);
    if (!runs) return;
    const kept: Array<[number, number]> = [];
    for (const [lo, hi] of runs) {
      if (hi < first || lo > last) kept.push([lo, hi]);
      else {
        if (lo < first) kept.push([lo, first - 1]);
        if (hi > last) kept.push([last + 1, hi]);
      }
    }
    if (kept.length > 0) this.bySequence.set(seq, kept);
    else this.bySequence.delete(seq);
  }

  /** Every run as [sequence, first, last]. */
  runs(): Array<[number, number, number]> {
    const out: Array<[number, number, number]> = [];
    for (const [seq, runs] of this.bySequence) for (const [lo, hi] of runs) out.push([seq, lo, hi]);
    return out;
  }
}
