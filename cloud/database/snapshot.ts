// A consistent copy of a live database, taken from another process while the server writes (WAL mode).
// VACUUM INTO reads the whole database inside one read transaction: the copy is the database as of that
// transaction's start, whatever the writers commit meanwhile, and it never restarts (the online backup
// API, stepped page by page, starts over whenever another connection writes between steps).
import fs from "node:fs";
import type sqlite3 from "sqlite3";
import { loadSqlite3 } from "./sqlite-module.js";

async function openExisting(file: string): Promise<sqlite3.Database> {
  const { Database, OPEN_READWRITE } = await loadSqlite3();
  // No OPEN_CREATE: a wrong path is an error, never a new empty database.
  return new Promise((resolve, reject) => {
    const c = new Database(file, OPEN_READWRITE, (err) => (err ? reject(err) : resolve(c)));
  });
}

/** Writes a consistent copy of the database `file` to `dest` (which must not exist), owner-only. */
export async function snapshotDatabase(file: string, dest: string): Promise<void> {
  const conn = await openExisting(file);
  try {
    await new Promise<void>((resolve, reject) =>
      conn.exec("PRAGMA busy_timeout = 10000", (err) => (err ? reject(err) : resolve())),
    );
    await new Promise<void>((resolve, reject) =>
      conn.run("VACUUM INTO ?", [dest], (err) => (err ? reject(err) : resolve())),
    );
  } finally {
    await new Promise<void>((resolve) => conn.close(() => resolve()));
  }
  // Hashes, keys and tokens are in there.
  fs.chmodSync(dest, 0o600);
}
