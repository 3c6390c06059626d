// Checks an SQLite copy of a peer's store before it replaces anything (cloud-peer restore): that SQLite reads it
// whole (integrity_check), that it holds a cloud-peer store at all (an empty file is a valid, empty database), and
// that no migration in it is newer than this build knows (the peer would refuse to start on it).
import { pathToFileURL } from "node:url";
import type sqlite3 from "sqlite3";
import { loadSqlite3 } from "./sqlite-module.js";

const all = <T>(conn: sqlite3.Database, sql: string) =>
  new Promise<T[]>((resolve, reject) => conn.all(sql, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));

/** Throws an Error saying what is wrong with the store in `file`; `knownVersions` are this build's migrations. */
export async function checkStoreCopy(file: string, knownVersions: readonly number[]): Promise<void> {
  const { Database, OPEN_READONLY, OPEN_URI } = await loadSqlite3();
  // immutable: the copy is ours alone, so SQLite reads it without locks or a shared-memory file beside it.
  const uri = `${pathToFileURL(file).href}?immutable=1`;
  const conn = await new Promise<sqlite3.Database>((resolve, reject) => {
    const c = new Database(uri, OPEN_READONLY | OPEN_URI, (err) => (err ? reject(err) : resolve(c)));
  });
  try {
    let problems: Array<{ integrity_check: string }>;
    try {
      problems = await all<{ integrity_check: string }>(conn, "PRAGMA integrity_check(5)");
    } catch (e) {
      throw new Error(`the backup's database is damaged or no SQLite database (${(e as Error).message})`);
    }
    if (problems.length !== 1 || problems[0]!.integrity_check !== "ok")
      throw new Error(
        `the backup's database is damaged (SQLite integrity_check: ${problems.map((p) => p.integrity_check).join("; ")})`,
      );
    const tables = await all<{ name: string }>(
      conn,
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
    );
    const rows = tables.length
      ? await all<{ version: number; name: string }>(
          conn,
          "SELECT version, name FROM schema_migrations ORDER BY version",
        )
      : [];
    if (rows.length === 0)
      throw new Error("the backup's database holds no cloud-peer store (it is empty, or another program's)");
    const known = new Set(knownVersions);
    const newer = rows.filter((r) => !known.has(r.version));
    if (newer.length > 0)
      throw new Error(
        `the backup was made by a newer cloud-peer (migrations ${newer.map((r) => `${r.version} (${r.name})`).join(", ")}, this version knows up to ${Math.max(0, ...known)}): restore it with that version`,
      );
  } finally {
    await new Promise<void>((resolve) => conn.close(() => resolve()));
  }
}
