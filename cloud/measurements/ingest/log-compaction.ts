// When the chunk log (repo/chunk-log.ts) is compacted, and how much at a time. The group commits append to the
// log; a compaction moves a slice of the sequences (sequence id modulo `slices`) into the chunk tables, one slice
// every `everyMs` while the log holds rows: each stream's chunks of `slices` × `everyMs` then reach meas_chunks'
// index pages in one write, the log stays small (its unique index is written by every commit; readers read it
// beside the tables), and the commits that wait behind a compaction wait for a slice of it. Beyond `maxRows`
// rows the whole log is compacted at once.
import type { Db } from "../../database/db.js";
import { compactLog, logMeasurements } from "../repo/chunk-log.js";
import { measurementLock } from "../service/model.js";

export interface CompactionPace {
  slices: number;
  everyMs: number;
  maxRows: number;
}

/**
 * SQLite: a quarter of the sequences every 125 ms (a compaction takes SQLite's one writer from the commits, so
 * short ones). PostgreSQL: half of them every 250 ms, in larger and rarer slices: a compaction there locks only
 * the measurements it moves, other commits go on beside it, and each slice costs a few round trips whatever its size.
 */
export const SQLITE_PACE: CompactionPace = { slices: 4, everyMs: 125, maxRows: 40_000 };
export const POSTGRES_PACE: CompactionPace = { slices: 2, everyMs: 250, maxRows: 80_000 };

export class LogCompaction {
  /** Rows appended to the chunk log since it was last empty (-1: unknown, a previous run may have left some). */
  private logged = -1;
  private timer: NodeJS.Timeout | undefined;
  /** The slice of the sequences the next compaction moves. */
  private slice = 0;
  /** A compaction should run now (the store's scheduler asks). */
  due = false;
  /**
   * PostgreSQL: the measurements this instance appended to in this cycle of the slices and the one before. Its
   * compactions move (and lock) only theirs: the other instances compact their own, so no instance's commits wait
   * for another's compactions. Rows nobody appends to any more (an instance gone) go with a whole-log compaction.
   */
  private mine: Set<string> | undefined;
  private mineBefore = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly pace: CompactionPace,
    /** Tells the store's scheduler that a compaction became due. */
    private readonly wake: () => void,
  ) {
    if (db.dialect === "postgres") this.mine = new Set();
  }

  /** Counts appended log rows (of `measurements`); a compaction is due `everyMs` after the last one while the log holds rows. */
  appended(rows: number, measurements: Iterable<string>): void {
    if (this.mine) for (const m of measurements) this.mine.add(m);
    if (this.logged < 0) this.due = true;
    this.logged = Math.max(0, this.logged) + rows;
    if (this.logged >= this.pace.maxRows) this.due = true;
    else if (this.logged > 0) this.arm();
  }

  /** A compaction `everyMs` from now (unless one is armed). */
  private arm(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.due = true;
      this.wake();
    }, this.pace.everyMs);
    this.timer.unref();
  }

  /** Moves the chunk log into the chunk tables; on failure the rows stay (readers read them) and it is tried again. */
  async run(): Promise<void> {
    this.due = false;
    this.stop();
    const { slices, maxRows } = this.pace;
    try {
      if (this.logged < 0 || this.logged >= maxRows) {
        await this.db.transaction((tx) => compactLog(tx));
        this.logged = 0;
      } else {
        // Only the measurements it moves are locked (on PostgreSQL the commits of others go on meanwhile).
        // SQLite has one writer and no locks to name: the slice is moved without asking which measurements it holds.
        const mine = this.mine;
        const measurements =
          mine === undefined
            ? undefined
            : (await logMeasurements(this.db, this.slice, slices)).filter((m) => mine.has(m) || this.mineBefore.has(m));
        const part = { slice: this.slice, of: slices, measurements: measurements ?? [] };
        const locks = measurements?.flatMap((m) => measurementLock(m).locks);
        const moved =
          measurements?.length === 0 ? 0 : await this.db.transaction((tx) => compactLog(tx, part), { locks });
        this.slice = (this.slice + 1) % slices;
        if (this.slice === 0 && mine) [this.mineBefore, this.mine] = [mine, new Set()];
        this.logged = Math.max(0, this.logged - moved);
        // Rows of other slices are left: the next slice is due in everyMs.
        if (this.logged > 0) this.arm();
      }
    } catch {
      // Tried again later, never at once: a full disk would otherwise make this a busy loop.
      this.logged = Math.max(1, this.logged);
      this.arm();
    }
  }

  /** Compacts the whole log unless it is known to be empty (shutdown, tests). */
  async finish(): Promise<void> {
    this.stop();
    if (this.logged !== 0) await this.db.transaction((tx) => compactLog(tx)).then(() => (this.logged = 0));
  }

  private stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
