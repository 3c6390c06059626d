// `cloud-peer backup --data DIR --to PATH`: a consistent copy of a peer's data, taken while it runs.
// The ingest journal's files are copied first: a chunk acknowledged before the copy is either still in them or
// already applied, and so in the database copied next (restore puts both back; the peer applies the journal
// at its start, skipping what the database already holds; a torn last record is left out). The database is copied
// as of one instant (cloud/database/snapshot.ts), then each payload file up to
// the last byte that copy references; a sequence deleted in between makes a new attempt. The copy is
// built in PATH.partial-<pid> and renamed to PATH when complete, so a PATH that exists is a whole backup.
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { isEmptyDir, syncPath } from "../../lib/fs-checks.js";
import { ADMIN_PASSWORD_FILE } from "../accounts/service/admin-password-file.js";
import { payloadFileEnds } from "../measurements/repo/sequences.js";
import { copyJournal } from "../measurements/storage/journal-files.js";
import { copyPayloadPrefixes, PayloadChangedError } from "../measurements/storage/payload-copy.js";
import { VERSION } from "../server.js";
import { SqliteDb as Db } from "../database/db.js";
import { snapshotDatabase } from "../database/snapshot.js";
import { DATA_CHUNKS, DATA_DB, DATA_JOURNAL, DATA_QUIC } from "./data-dir.js";
import { refusePostgres, storeCommand, storeConfig, type StoreFlags } from "./open-store.js";

/** Describes a backup; restore checks it is there (a backup is complete) and reads the payload ends. */
export const MANIFEST = "backup.json";
/** Files and folders copied as they are besides the database and the payloads (when present). */
export const PLAIN_ENTRIES = [DATA_QUIC, ADMIN_PASSWORD_FILE, DATA_JOURNAL];
const ATTEMPTS = 5;

export interface Manifest {
  format: 1;
  peer_version: string;
  created_at: string;
  /** Payload file of each sequence (its id) and its length in the backup. */
  payload_files: Record<string, number>;
}

/** The database and payloads as of one instant, into `stage`. */
async function snapshotInto(dataDir: string, stage: string): Promise<Record<string, number>> {
  const journal = path.join(dataDir, DATA_JOURNAL);
  await copyJournal(journal, path.join(stage, DATA_JOURNAL));
  const dbCopy = path.join(stage, DATA_DB);
  await snapshotDatabase(path.join(dataDir, DATA_DB), dbCopy);
  const copy = await Db.open(dbCopy);
  let ends: Map<number, number>;
  try {
    ends = await payloadFileEnds(copy);
  } finally {
    await copy.close();
  }
  await copyPayloadPrefixes(path.join(dataDir, DATA_CHUNKS), path.join(stage, DATA_CHUNKS), ends);
  await syncPath(dbCopy);
  return Object.fromEntries([...ends].map(([id, end]) => [String(id), end]));
}

export async function backupCommand(opts: { to: string } & StoreFlags): Promise<{ path: string; manifest: Manifest }> {
  const config = storeConfig(opts);
  refusePostgres(
    config,
    "back it up with pg_dump (chunk payloads are in the database too); backup copies an SQLite data directory",
  );
  const dataDir = config.dataDir;
  const target = path.resolve(opts.to);
  if (!isEmptyDir(target)) throw new Error(`${target} exists and is not empty: give a new path for the backup`);
  if (target === dataDir || target.startsWith(dataDir + path.sep))
    throw new Error("the backup cannot go inside the data directory it copies");
  const stage = `${target}.partial-${process.pid}`;
  try {
    let payloads: Record<string, number> | undefined;
    for (let attempt = 1; payloads === undefined; attempt++) {
      await fsp.rm(stage, { recursive: true, force: true });
      await fsp.mkdir(stage, { recursive: true, mode: 0o700 });
      try {
        payloads = await snapshotInto(dataDir, stage);
      } catch (e) {
        if (!(e instanceof PayloadChangedError) || attempt >= ATTEMPTS) throw e;
      }
    }
    for (const entry of PLAIN_ENTRIES) {
      if (entry === DATA_JOURNAL) continue; // copied before the database
      const from = path.join(dataDir, entry);
      if (fs.existsSync(from))
        await fsp.cp(from, path.join(stage, entry), { recursive: true, preserveTimestamps: true });
    }
    const manifest: Manifest = {
      format: 1,
      peer_version: VERSION,
      created_at: new Date().toISOString(),
      payload_files: payloads,
    };
    await fsp.writeFile(path.join(stage, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    await syncPath(stage);
    if (fs.existsSync(target)) await fsp.rmdir(target);
    await fsp.rename(stage, target);
    await syncPath(path.dirname(target));
    return { path: target, manifest };
  } catch (e) {
    await fsp.rm(stage, { recursive: true, force: true });
    throw e;
  }
}

export function register(program: Command): void {
  const backup = program
    .command("backup")
    .description(
      "copy a peer's data (database, payload files, QUIC certificate) consistently, while it runs (SQLite; on PostgreSQL use pg_dump)",
    )
    .requiredOption("--to <path>", "new directory for the backup (must not exist, or be empty)");
  storeCommand<{ to: string }>(backup, async (opts) => {
    const r = await backupCommand(opts);
    const files = Object.values(r.manifest.payload_files);
    const bytes = files.reduce((a, b) => a + b, 0);
    process.stdout.write(
      `backup written to ${r.path} (database and ${files.length} payload files, ${bytes} payload bytes)\n`,
    );
  });
}
