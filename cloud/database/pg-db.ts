// The cloud's database on PostgreSQL (`--database postgres://...`): a connection pool behind the same Db
// interface as SQLite's (db.ts). Statements are written in SQLite's dialect and translated (pg-sql.ts).
//
// Transactions keep SQLite's semantics where code counts on them: SQLite has one writer at a time (BEGIN
// IMMEDIATE), and code reads then writes inside a transaction. Here a transaction first takes transaction-scoped
// advisory locks, so writers that might touch the same rows are serialised across every instance on the
// database, and each statement after the locks sees what the writers before committed (READ COMMITTED):
// - one naming its resources (TxOptions.locks: chunk ingest, a measurement's writes) takes the writer lock
//   shared and one lock per resource exclusive: transactions on disjoint resources run side by side;
// - any other takes the writer lock exclusive: it runs alone, as every transaction did before (organisation,
//   accounts, OAuth2 clients and keys: rare writes that read then write across tables).
import { createHash } from "node:crypto";
import pg from "pg";
import type { Db, Params, Queryable, SqlParam, TxOptions } from "./db.js";
import { toPostgres } from "./pg-sql.js";

/** Advisory lock keys (one 64-bit space per database): the writer lock and the migration lock. */
const WRITER_LOCK = 0x636c6f7564; // "cloud"
const MIGRATION_LOCK = 0x6d69677261; // "migra"

const INT8 = 20;
const NUMERIC = 1700;

/** A resource's advisory lock key: 64 bits of its name's digest (a collision only serialises two resources). */
export const lockKey = (resource: string) => createHash("sha1").update(resource).digest().readBigInt64BE(0).toString();

/**
 * BEGIN and the transaction's locks in one round trip (the simple query protocol runs both; the keys are our own
 * digests, written as numbers): the shared writer lock, then each resource's lock in one order (no two
 * transactions wait for each other's); or the writer lock exclusive when it names no resource.
 */
const beginLocked = (keys: readonly string[]) =>
  keys.length === 0
    ? `BEGIN; SELECT pg_advisory_xact_lock(${WRITER_LOCK})`
    : `BEGIN; SELECT pg_advisory_xact_lock_shared(${WRITER_LOCK}), (SELECT count(pg_advisory_xact_lock(k)) FROM unnest('{${keys.join(",")}}'::bigint[]) AS k)`;

/** int8 (COUNT, BIGINT columns) and numeric (SUM of BIGINT) as JS numbers, as sqlite3 gives them. */
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8 || oid === NUMERIC) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

/** Parameters as PostgreSQL takes them: booleans as the 0/1 SQLite stores (columns are BIGINT). */
function values(params: Params | undefined): unknown[] {
  if (params === undefined) return [];
  if (!Array.isArray(params)) throw new Error("named parameters are not supported on PostgreSQL");
  return params.map((p: SqlParam) => (typeof p === "boolean" ? (p ? 1 : 0) : typeof p === "bigint" ? p.toString() : p));
}

interface PgRunner {
  query(q: string | pg.QueryConfig): Promise<pg.QueryResult>;
}

/**
 * A transaction's statements one after another on its connection. Callers may start several at once
 * (allStatements); pg would queue them itself, but that is deprecated and goes in pg 9.
 */
class SerialRunner implements PgRunner {
  private tail: Promise<unknown> = Promise.resolve();
  constructor(private readonly client: pg.PoolClient) {}
  query(q: string | pg.QueryConfig): Promise<pg.QueryResult> {
    const next = this.tail.then(() => this.client.query(q));
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/** A named statement: each connection parses and plans it once (the name is the text's digest). */
function statement(sql: string, params: Params | undefined): pg.QueryConfig {
  const text = toPostgres(sql);
  return { name: `s${createHash("sha1").update(text).digest("base64url")}`, text, values: values(params) };
}

function noLastId(): never {
  throw new Error("lastID is SQLite's: insert with RETURNING id");
}

class PgStatements implements Queryable {
  readonly dialect = "postgres" as const;

  constructor(protected readonly runner: PgRunner) {}

  async run(sql: string, params?: Params) {
    const r = await this.runner.query(statement(sql, params));
    return {
      changes: r.rowCount ?? 0,
      get lastID(): number {
        return noLastId();
      },
    };
  }
  async get<T = Record<string, unknown>>(sql: string, params?: Params) {
    return (await this.all<T>(sql, params))[0];
  }
  async all<T = Record<string, unknown>>(sql: string, params?: Params) {
    return (await this.runner.query(statement(sql, params))).rows as T[];
  }
  /** Statements without parameters, several separated by `;` (the simple query protocol), untranslated. */
  async exec(sql: string) {
    await this.runner.query(sql);
  }
}

export class PgDb extends PgStatements implements Db {
  private constructor(private readonly pool: pg.Pool) {
    super(pool);
  }

  static async open(url: string, opts: { max?: number } = {}): Promise<PgDb> {
    // A server that cannot be reached fails a query within 10 s instead of the OS's TCP timeout (readiness reports it).
    const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, types, connectionTimeoutMillis: 10_000 });
    // An idle client losing its connection (a restarted server) must not crash the process; the next query reconnects.
    pool.on("error", () => undefined);
    try {
      await pool.query("SELECT 1");
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw new Error(`cannot reach the database: ${(e as Error).message}`);
    }
    return new PgDb(pool);
  }

  /**
   * A client of the pool, with an `error` listener while it is checked out: a connection lost then (a cut network,
   * a stopped server) fails its queries and marks it broken instead of an unhandled 'error' ending the process.
   */
  private async checkout(): Promise<{ client: pg.PoolClient; release(err?: Error): void }> {
    const client = await this.pool.connect();
    let lost: Error | undefined;
    const onError = (e: Error) => void (lost ??= e);
    client.on("error", onError);
    return {
      client,
      release(err?: Error) {
        client.removeListener("error", onError);
        // A broken client is not given back to the pool.
        client.release(err ?? lost);
      },
    };
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>, opts: TxOptions = {}): Promise<T> {
    const resources = [...new Set(opts.locks ?? [])].sort();
    const { client, release } = await this.checkout();
    let broken: Error | undefined;
    try {
      try {
        await client.query(beginLocked(resources.map(lockKey)));
        const result = await fn(new PgStatements(new SerialRunner(client)));
        await client.query("COMMIT");
        return result;
      } catch (err) {
        await client.query("ROLLBACK").catch((e: unknown) => (broken = e as Error));
        throw err;
      }
    } finally {
      release(broken);
    }
  }

  /** Runs fn holding a session advisory lock: instances starting together migrate one after the other. */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const { client, release } = await this.checkout();
    try {
      await client.query({ text: "SELECT pg_advisory_lock($1)", values: [MIGRATION_LOCK] });
      try {
        return await fn();
      } finally {
        await client.query({ text: "SELECT pg_advisory_unlock($1)", values: [MIGRATION_LOCK] });
      }
    } finally {
      release();
    }
  }

  async ping(): Promise<void> {
    await this.pool.query("SELECT 1");
  }

  async databaseBytes(): Promise<number> {
    return (await this.get<{ n: number }>("SELECT pg_database_size(current_database()) AS n"))!.n;
  }

  /** PostgreSQL checkpoints by itself. */
  async checkpoint(): Promise<void> {}

  async close(): Promise<void> {
    await this.pool.end();
  }
}
