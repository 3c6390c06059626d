// Which database the tests' cloud peers use: SQLite in their data directory (default), or, with
// CLOUD_TEST_DATABASE=postgres, a PostgreSQL database of their own on the server the global setup started
// (postgres-global-setup.ts). A peer restarted on the same data directory finds the same database again.
import crypto from "node:crypto";
import path from "node:path";
import pg from "pg";

export const onPostgres = () => process.env.CLOUD_TEST_DATABASE === "postgres";

/** Set by the global setup: the server's maintenance database, to create and drop the tests' databases. */
export const ADMIN_URL_ENV = "CLOUD_TEST_PG_ADMIN_URL";

function adminUrl(): string {
  const url = process.env[ADMIN_URL_ENV];
  if (!url)
    throw new Error(
      `CLOUD_TEST_DATABASE=postgres needs the PostgreSQL global setup (tests/support/postgres-global-setup.ts; ${ADMIN_URL_ENV} unset)`,
    );
  return url;
}

const nameOf = (dataDir: string) =>
  `t_${crypto.createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 24)}`;

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** The `database` setting for a peer on dataDir: undefined on SQLite; on PostgreSQL its database, made at first use. */
export async function testDatabaseFor(dataDir: string): Promise<string | undefined> {
  if (!onPostgres()) return undefined;
  const name = nameOf(dataDir);
  await admin(async (c) => {
    const found = await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount === 0) await c.query(`CREATE DATABASE ${name}`);
  });
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops the database of a peer on dataDir (nothing on SQLite: the data directory holds it). */
export async function dropTestDatabase(dataDir: string): Promise<void> {
  if (!onPostgres()) return;
  await admin((c) => c.query(`DROP DATABASE IF EXISTS ${nameOf(dataDir)} WITH (FORCE)`));
}

/**
 * Runs fn (a maintenance command called in-process, which reads CLOUD_DATABASE like the real one) with the
 * database of the peer on dataDir in CLOUD_DATABASE; nothing changes on SQLite.
 */
export async function withPeerDatabaseEnv<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  const url = await testDatabaseFor(dataDir);
  if (url === undefined) return fn();
  const before = process.env.CLOUD_DATABASE;
  process.env.CLOUD_DATABASE = url;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.CLOUD_DATABASE;
    else process.env.CLOUD_DATABASE = before;
  }
}
