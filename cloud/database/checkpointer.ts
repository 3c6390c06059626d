// WAL checkpoints on a second connection, mostly off the write path. Left to the writing connection, SQLite
// runs a checkpoint inside whichever commit crosses wal_autocheckpoint pages: that commit copies the WAL into
// the database and fsyncs both while everything queued behind it waits. Here each round is a PASSIVE
// checkpoint beside the writer (it blocks no one), then a second one under the writer's lock, which copies
// only what was committed meanwhile: the WAL is then fully checkpointed, so the next write starts it over
// (a WAL checkpointed only beside a busy writer is never complete and would grow without end).
import type sqlite3 from "sqlite3";
import { loadSqlite3 } from "./sqlite-module.js";

/** How often a round runs while the database is used. */
const INTERVAL_MS = 200;
/** The writer checkpoints itself only beyond this many WAL pages (a safety net: the rounds fell behind). */
export const WRITER_AUTOCHECKPOINT_PAGES = 8192;

/** Runs fn while no statement of the writing connection runs (Db's lock). */
export type WriterLock = <T>(fn: () => Promise<T>) => Promise<T>;

export class Checkpointer {
  private used = false;
  private running: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly conn: sqlite3.Database,
    private readonly underLock: WriterLock,
  ) {
    this.timer = setInterval(() => void this.round(), INTERVAL_MS);
    this.timer.unref();
  }

  /** `synchronous`: the writer's level (db.ts), so a checkpoint syncs as the writer's commits do. */
  static async open(file: string, underLock: WriterLock, synchronous: "FULL" | "NORMAL"): Promise<Checkpointer> {
    const { Database, OPEN_READWRITE } = await loadSqlite3();
    const conn = await new Promise<sqlite3.Database>((resolve, reject) => {
      const c = new Database(file, OPEN_READWRITE, (err) => (err ? reject(err) : resolve(c)));
    });
    await new Promise<void>((resolve, reject) =>
      conn.exec(`PRAGMA synchronous = ${synchronous}`, (err) => (err ? reject(err) : resolve())),
    );
    return new Checkpointer(conn, underLock);
  }

  /** The database was used (reads too: cheaper than telling them apart; a round with nothing to do is cheap). */
  touched(): void {
    this.used = true;
  }

  private round(): Promise<void> {
    if (!this.used || this.running) return this.running ?? Promise.resolve();
    return this.roundNow();
  }

  /** A round now (after the one running, if any); resolves when it is done. */
  async roundNow(): Promise<void> {
    // Waits for any round under way, also one another caller started meanwhile: rounds never overlap.
    while (this.running) await this.running.catch(() => undefined);
    this.used = false;
    this.running = this.checkpoint()
      .then(() => this.underLock(() => this.checkpoint()))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** A PASSIVE checkpoint; a failure (busy: the writer's own checkpoint runs) waits for the next round. */
  private checkpoint(): Promise<void> {
    return new Promise<void>((resolve) => this.conn.run("PRAGMA wal_checkpoint(PASSIVE)", () => resolve()));
  }

  /** Stops the rounds and closes the connection (the writer's close does the last checkpoint). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await new Promise<void>((resolve) => this.conn.close(() => resolve()));
  }
}
