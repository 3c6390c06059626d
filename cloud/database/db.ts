// A small promise wrapper over one sqlite3 connection. SQLite serialises writers anyway; we keep
// one connection and a lock so that a transaction's statements never interleave with others'.
import fs from "node:fs";
import type sqlite3 from "sqlite3";
import { Checkpointer, WRITER_AUTOCHECKPOINT_PAGES } from "./checkpointer.js";
import { loadSqlite3 } from "./sqlite-module.js";

/**
 * What an acknowledged write survives. power-loss: every commit fsyncs the WAL (`synchronous = FULL`), so a
 * committed transaction survives a power cut or kernel crash. process-crash: commits reach the OS only
 * (`synchronous = NORMAL`; the WAL is fsynced at checkpoints), so a crash of the process loses nothing, but a
 * power cut may lose the last commits (the database stays consistent).
 */
export type Durability = "power-loss" | "process-crash";
export const DURABILITIES: readonly Durability[] = ["power-loss", "process-crash"];
/** The `PRAGMA synchronous` level of each durability. */
export const synchronousOf = (d: Durability) => (d === "power-loss" ? "FULL" : "NORMAL");

export type SqlParam = string | number | bigint | null | Buffer | boolean;
export type Params = SqlParam[] | Record<string, SqlParam>;

export interface Queryable {
  /** Which SQL the statements are written in; PostgreSQL's layer translates (pg-sql.ts). */
  readonly dialect: Dialect;
  /** `lastID` is SQLite's: portable code inserts with `RETURNING id` instead. */
  run(sql: string, params?: Params): Promise<{ lastID: number; changes: number }>;
  get<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T | undefined>;
  all<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]>;
  exec(sql: string): Promise<void>;
}

export type Dialect = "sqlite" | "postgres";

export interface TxOptions {
  /**
   * The resources (say `meas:<uuid>`) the transaction reads and writes, where it touches no other writer's
   * rows: on PostgreSQL transactions with disjoint resources then run side by side, those sharing one run one
   * after the other, and a transaction without resources runs alone (pg-db.ts). SQLite has one writer anyway.
   */
  locks?: readonly string[];
  /**
   * SQLite: the transaction's SELECTs may start before its BEGIN has completed, side by side with it, so a commit
   * waits for SQLite's thread fewer times (each wait is a turn of the event loop behind every socket's data). Such
   * a read sees the last committed state, which is what it would see inside the transaction as long as no other
   * process writes the rows it reads; this process's writers are serialised anyway. Its writes wait for the BEGIN.
   */
  earlyReads?: boolean;
}

/** The database of a cloud peer: embedded SQLite (this file) or PostgreSQL (pg-db.ts). */
export interface Db extends Queryable {
  /** Runs fn in one transaction; its statements go through `tx` only. Writers are serialised, as in SQLite (see TxOptions). */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, opts?: TxOptions): Promise<T>;
  /** Runs fn while no other instance on the same database runs it (migrations). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  /** The database's size where it is not files in the data directory (PostgreSQL). */
  databaseBytes?(): Promise<number>;
  checkpoint(): Promise<void>;
  close(): Promise<void>;
}

/** Prepared statements kept per SQL text: a cached statement costs one thread-pool hop, not three. */
const STATEMENT_CACHE = 256;

class Statements implements Queryable {
  readonly dialect = "sqlite" as const;
  private readonly cache = new Map<string, Promise<sqlite3.Statement>>();

  constructor(protected readonly conn: sqlite3.Database) {}

  /** The cached statement, prepared on first use; SQL that does not prepare is rejected and not kept. */
  private statement(sql: string): Promise<sqlite3.Statement> {
    let st = this.cache.get(sql);
    if (st !== undefined) {
      // Most recently used last: the first entry is the one to drop when full.
      this.cache.delete(sql);
      this.cache.set(sql, st);
      return st;
    }
    st = new Promise<sqlite3.Statement>((resolve, reject) => {
      const prepared = this.conn.prepare(sql, (err) => (err ? reject(err) : resolve(prepared)));
    });
    st.catch(() => this.cache.delete(sql));
    this.cache.set(sql, st);
    if (this.cache.size > STATEMENT_CACHE) {
      const [oldest, old] = this.cache.entries().next().value as [string, Promise<sqlite3.Statement>];
      this.cache.delete(oldest);
      void old.then(
        (o) => o.finalize(),
        () => undefined,
      );
    }
    return st;
  }

  async run(sql: string, params: Params = []) {
    const st = await this.statement(sql);
    return new Promise<{ lastID: number; changes: number }>((resolve, reject) =>
      st.run(params, function (err) {
        if (err) reject(err);
        else resolve({ lastID: this.lastID, changes: this.changes });
      }),
    );
  }
  /** Through all(): a statement left on a row (get) would hold its read snapshot open in the cache. */
  async get<T>(sql: string, params: Params = []) {
    return (await this.all<T>(sql, params))[0];
  }
  async all<T>(sql: string, params: Params = []) {
    const st = await this.statement(sql);
    return new Promise<T[]>((resolve, reject) =>
      st.all(params, (err, rows) => (err ? reject(err) : resolve(rows as T[]))),
    );
  }
  exec(sql: string) {
    return new Promise<void>((resolve, reject) => this.conn.exec(sql, (err) => (err ? reject(err) : resolve())));
  }

  /** Finalizes the cached statements (before the connection closes). */
  async clear(): Promise<void> {
    const all = [...this.cache.values()];
    this.cache.clear();
    await Promise.all(
      all.map((st) =>
        st.then(
          (o) => new Promise<void>((resolve) => o.finalize(() => resolve())),
          () => undefined,
        ),
      ),
    );
  }
}

/** The page cache of the writing connection, KiB (PRAGMA cache_size; why 64 MiB: see open()). */
export const SQLITE_CACHE_KIB = 65536;

export class SqliteDb implements Db {
  readonly dialect = "sqlite" as const;
  private lock: Promise<unknown> = Promise.resolve();
  private readonly direct: Statements;

  private checkpointer: Checkpointer | undefined;

  private constructor(private readonly conn: sqlite3.Database) {
    this.direct = new Statements(conn);
  }

  static async open(file: string, opts: { durability?: Durability } = {}): Promise<SqliteDb> {
    const synchronous = synchronousOf(opts.durability ?? "power-loss");
    const { Database } = await loadSqlite3();
    const conn = await new Promise<sqlite3.Database>((resolve, reject) => {
      const c = new Database(file, (err) => (err ? reject(cannotOpen(err, file)) : resolve(c)));
    });
    // Hashes, keys and tokens live here: owner-only, whatever the data directory's mode (the WAL and
    // shared-memory files SQLite creates next take the database file's permissions).
    if (file !== ":memory:" && !file.startsWith("file:")) fs.chmodSync(file, 0o600);
    const db = new SqliteDb(conn);
    // 16 KiB pages (new databases only; an existing file keeps its size): chunk payloads of hundreds of KiB
    // take a quarter of the overflow pages 4 KiB needs, and small rows stay cheap to rewrite. A 64 MiB page
    // cache (SQLite's default is 2 MiB): a commit of many streams' chunks touches a few index pages per stream,
    // which the default cache cannot hold from one commit to the next, so each was read back from the file.
    await db.direct.exec(
      `PRAGMA page_size = 16384; PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous}; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA cache_size = -${SQLITE_CACHE_KIB};`,
    );
    if (file !== ":memory:" && !file.startsWith("file:")) {
      // Checkpoints run on their own connection (checkpointer.ts); the WAL file is cut back after a large burst.
      await db.direct.exec(
        `PRAGMA wal_autocheckpoint = ${WRITER_AUTOCHECKPOINT_PAGES}; PRAGMA journal_size_limit = ${64 * 1024 * 1024};`,
      );
      db.checkpointer = await Checkpointer.open(file, (fn) => db.locked(fn), synchronous);
    }
    return db;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    this.checkpointer?.touched();
    return this.locked(fn);
  }

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.lock.then(fn, fn);
    this.lock = next.catch(() => undefined);
    return next;
  }

  run(sql: string, params?: Params) {
    return this.serial(() => this.direct.run(sql, params));
  }
  get<T = Record<string, unknown>>(sql: string, params?: Params) {
    return this.serial(() => this.direct.get<T>(sql, params));
  }
  all<T = Record<string, unknown>>(sql: string, params?: Params) {
    return this.serial(() => this.direct.all<T>(sql, params));
  }
  exec(sql: string) {
    return this.serial(() => this.direct.exec(sql));
  }

  /** Runs fn inside BEGIN IMMEDIATE ... COMMIT; its statements go through `tx` only (one writer: no locks to name). */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, opts?: TxOptions): Promise<T> {
    return this.serial(async () => {
      const begun = heard(this.direct.exec("BEGIN IMMEDIATE"));
      if (!opts?.earlyReads) await begun;
      try {
        const result = await fn(opts?.earlyReads ? new EarlyReads(this.direct, begun) : this.direct);
        await begun;
        await this.direct.exec("COMMIT");
        return result;
      } catch (err) {
        const open = await begun.then(
          () => true,
          () => false,
        );
        if (open) await this.direct.exec("ROLLBACK").catch(() => undefined);
        throw err;
      }
    });
  }

  /** One process owns an SQLite database: nothing to exclude. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  /**
   * Answers once the connection runs a statement (the readiness probe): it waits behind a running transaction
   * like any statement, but is not counted as use, so polling it starts no checkpoint rounds.
   */
  async ping(): Promise<void> {
    await this.locked(() => this.direct.exec("SELECT 1"));
  }

  /** A checkpoint round now (checkpointer.ts; nothing for an in-memory database): the next write starts the WAL over. */
  checkpoint(): Promise<void> {
    return this.checkpointer?.roundNow() ?? Promise.resolve();
  }

  async close(): Promise<void> {
    // Before taking the lock: a checkpoint round may be waiting for it.
    const cp = this.checkpointer;
    this.checkpointer = undefined;
    await cp?.close();
    return this.locked(async () => {
      await this.direct.clear();
      await new Promise<void>((resolve, reject) => this.conn.close((err) => (err ? reject(err) : resolve())));
    });
  }
}

/** A transaction's statements (TxOptions.earlyReads): SELECTs at once, anything else once BEGIN has completed. */
class EarlyReads implements Queryable {
  readonly dialect = "sqlite" as const;
  constructor(
    private readonly direct: Statements,
    private readonly begun: Promise<void>,
  ) {}
  private static isRead = (sql: string) => /^\s*SELECT\b/i.test(sql);
  run(sql: string, params?: Params) {
    return this.begun.then(() => this.direct.run(sql, params));
  }
  get<T = Record<string, unknown>>(sql: string, params?: Params) {
    return EarlyReads.isRead(sql)
      ? this.direct.get<T>(sql, params)
      : this.begun.then(() => this.direct.get<T>(sql, params));
  }
  all<T = Record<string, unknown>>(sql: string, params?: Params) {
    return EarlyReads.isRead(sql)
      ? this.direct.all<T>(sql, params)
      : this.begun.then(() => this.direct.all<T>(sql, params));
  }
  exec(sql: string) {
    return this.begun.then(() => this.direct.exec(sql));
  }
}

/**
 * Waits for statements of one transaction issued together (they run on the thread pool side by side), then
 * reports the first failure: none is left running into the ROLLBACK, where it would write outside the transaction.
 */
export async function allStatements(ps: ReadonlyArray<Promise<unknown>>): Promise<void> {
  const failed = (await Promise.allSettled(ps)).find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}

/**
 * The same promise, marked as heard: a write started now and awaited later (allStatements) may fail while
 * the caller awaits something else, and a rejection nobody listens to yet ends the process (SQLITE_FULL on a
 * full disk). Its failure still reaches whoever awaits it.
 */
export function heard<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

/** UNIQUE constraint failures become 409s in repositories (PostgreSQL: SQLSTATE 23505 unique_violation). */
export const isUniqueViolation = (err: unknown) =>
  err instanceof Error &&
  (/SQLITE_CONSTRAINT: UNIQUE/.test(err.message) || (err as { code?: unknown }).code === "23505");

/** The disk holding the data is full or over quota (a payload file write, or SQLite): nothing was stored. */
export const isStorageFull = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  // 53100: PostgreSQL's disk_full.
  return code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL" || code === "53100";
};

/** PostgreSQL's SQLSTATEs of a lost or refused connection: class 08, and the server shutting down or starting. */
const CONNECTION_STATES = /^(08...|57P0[1-3])$/;
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
/** node-postgres reports a lost connection and a connect timeout by message only. */
const CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/;

/** Whether `err` says the database server cannot be reached right now (a condition to retry, not a fault of the request). */
export const isDatabaseUnavailable = (err: unknown): boolean => {
  if (typeof err !== "object" || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (CONNECTION_STATES.test(code) || CONNECTION_CODES.has(code))) return true;
  if (err instanceof AggregateError) return err.errors.some(isDatabaseUnavailable);
  return typeof message === "string" && CONNECTION_MESSAGES.test(message);
};

/**
 * Whether `err` is PostgreSQL refusing a text value (22021 character_not_in_repertoire: a NUL character, which its
 * text cannot hold; 22P05 untranslatable_character): the request's fault, as SQLite would have stored it.
 */
export const isUnstorableText = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "22021" || code === "22P05";
};

/** Inserts one row and returns its AUTOINCREMENT / identity `id` (both engines speak RETURNING). */
export async function insertId(q: Queryable, sql: string, params: Params): Promise<number> {
  const row = await q.get<{ id: number }>(`${sql} RETURNING id`, params);
  return row!.id;
}

/**
 * SQLite says only "unable to open database file": the path, and what usually causes it (a missing directory,
 * or a user who may not read and write it, e.g. a maintenance command run as another user than the service).
 */
function cannotOpen(err: Error & { code?: string }, file: string): Error {
  if (err.code !== "SQLITE_CANTOPEN") return err;
  const uid = process.getuid?.();
  return new Error(
    `cannot open the database ${file} (SQLITE_CANTOPEN): check that its directory exists and that the user running this command${uid === undefined ? "" : ` (uid ${uid})`} may read and write the directory and the file (run it as the service's user, e.g. sudo -u cloud-peer)`,
  );
}
