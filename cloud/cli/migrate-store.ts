// `cloud-peer migrate-store --from sqlite:DIR --to postgres://...`: moves an SQLite cloud peer's data (every
// table, and the chunk payloads of its payload files, into their rows) to an empty PostgreSQL database, which
// then serves with `--database postgres://...`. Stop the peer first: what it writes meanwhile is not copied.
import fsp from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { journalHoldsRecords } from "../measurements/storage/journal-files.js";
import { payloadFileName } from "../measurements/storage/payload-files.js";
import { modules } from "../modules.js";
import { copyStore, postgresIsEmpty } from "../database/copy-store.js";
import { SqliteDb, type SqlParam } from "../database/db.js";
import { migrate } from "../database/migrate.js";
import { isPostgresUrl } from "../database/open.js";
import { PgDb } from "../database/pg-db.js";
import { DATA_CHUNKS, DATA_DB, DATA_JOURNAL, requireDatabase } from "./data-dir.js";

/** Reads `length` bytes at `offset` of a sequence's payload file; a file cut short is an error, not a short payload. */
async function readPayload(dir: string, seqId: number, offset: number, length: number): Promise<Buffer> {
  const fh = await fsp.open(path.join(dir, DATA_CHUNKS, payloadFileName(seqId)), "r");
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await fh.read(buf, 0, length, offset);
    if (bytesRead !== length) throw new Error(`payload file of sequence ${seqId} ends before byte ${offset + length}`);
    return buf;
  } finally {
    await fh.close();
  }
}

/** Copies the store; returns the rows copied per table. */
export async function migrateStoreCommand(opts: { from: string; to: string }): Promise<Record<string, number>> {
  const m = /^sqlite:(.+)$/.exec(opts.from);
  if (!m) throw new Error("--from must be sqlite:DIR (the data directory of the SQLite peer)");
  if (!isPostgresUrl(opts.to)) throw new Error("--to must be a postgres:// URL");
  const dir = path.resolve(m[1]!);
  requireDatabase(dir);
  if (await journalHoldsRecords(path.join(dir, DATA_JOURNAL)))
    throw new Error(
      "the ingest journal holds acknowledged chunks not yet in the database: start the peer on this directory once (it stores them), stop it, then migrate",
    );
  const all = modules.flatMap((mod) => mod.migrations ?? []);
  const dst = await PgDb.open(opts.to);
  try {
    if (!(await postgresIsEmpty(dst)))
      throw new Error("the target database is not empty: migrate-store copies into an empty database only");
    const src = await SqliteDb.open(path.join(dir, DATA_DB));
    try {
      // Both at the same schema version: the source as its next start would bring it, the target made from scratch.
      await migrate(src, all);
      await migrate(dst, all);
      return await copyStore(src, dst, async (table, row) => {
        if (table !== "meas_chunk_payloads" || row.file_length === null || row.file_length === undefined) return row;
        const payload = await readPayload(
          dir,
          Number(row.sequence_id),
          Number(row.file_offset),
          Number(row.file_length),
        );
        return { ...row, payload, file_offset: null, file_length: null } satisfies Record<string, SqlParam>;
      });
    } finally {
      await src.close();
    }
  } finally {
    await dst.close();
  }
}

export function register(program: Command): void {
  program
    .command("migrate-store")
    .description("copy an SQLite peer's data (stopped) into an empty PostgreSQL database")
    .requiredOption("--from <sqlite:dir>", "the SQLite peer's data directory, as sqlite:DIR")
    .requiredOption("--to <url>", "postgres://user@host:port/db (a password is better given in PGPASSWORD)")
    .action(async (opts: { from: string; to: string }) => {
      try {
        const copied = await migrateStoreCommand(opts);
        for (const [table, n] of Object.entries(copied)) process.stdout.write(`${table}: ${n} rows\n`);
      } catch (err) {
        process.stderr.write(`cloud-peer migrate-store: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });
}
