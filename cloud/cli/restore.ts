// `cloud-peer restore --from PATH --data DIR [--force]`: puts a backup (cloud-peer backup) in place as a
// peer's data directory. An empty (or new) directory only, unless --force: then the peer's own files there
// are replaced. Nothing there is touched before the copy is checked: the backup's files (manifest, payload
// lengths), a data directory no running process holds open, and the copied database itself (SQLite's
// integrity_check, a cloud-peer store, no migration newer than this build). The new entries are staged beside
// the old ones (`.restoring`), the old ones moved aside (`.replaced`), the staged ones renamed into place, the
// database last, and only then are the old ones removed.
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import * as Schema from "effect/Schema";
import { payloadFileName } from "../measurements/storage/payload-files.js";
import { isEmptyDir, syncPath } from "../../lib/fs-checks.js";
import { MANIFEST, PLAIN_ENTRIES } from "./backup.js";
import { DATA_CHUNKS, DATA_DB, processesHolding } from "./data-dir.js";
import { checkStoreCopy } from "../database/check-copy.js";
import { modules } from "../modules.js";
import { refusePostgres, storeCommand, storeConfig, type StoreFlags } from "./open-store.js";

const ManifestSchema = Schema.Struct({
  format: Schema.Literal(1),
  created_at: Schema.String,
  payload_files: Schema.Record({ key: Schema.String, value: Schema.Number }),
});

/** Reads and checks a backup: its manifest, database and payload files of the lengths it names. */
function readBackup(from: string): typeof ManifestSchema.Type {
  const file = path.join(from, MANIFEST);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    throw new Error(`${from} is not a cloud-peer backup (no ${MANIFEST}; an unfinished backup has none)`);
  }
  let manifest: typeof ManifestSchema.Type;
  try {
    manifest = Schema.decodeUnknownSync(ManifestSchema)(JSON.parse(text));
  } catch {
    throw new Error(`${file} is not a manifest this version reads`);
  }
  if (!fs.existsSync(path.join(from, DATA_DB))) throw new Error(`${from} has no ${DATA_DB}`);
  for (const [id, length] of Object.entries(manifest.payload_files)) {
    const name = path.join(DATA_CHUNKS, payloadFileName(Number(id)));
    const f = path.join(from, name);
    const size = fs.existsSync(f) ? fs.statSync(f).size : -1;
    if (size !== length)
      throw new Error(
        `the backup is damaged: ${name} should hold ${length} bytes (${size < 0 ? "missing" : `has ${size}`})`,
      );
  }
  return manifest;
}

/** The peer's own entries in a data directory (the WAL of an old database above all). */
const DB_FILES = [DATA_DB, `${DATA_DB}-wal`, `${DATA_DB}-shm`, `${DATA_DB}-journal`];
const STAGED = ".restoring";
const REPLACED = ".replaced";

/** A restore cut short left these: its staged copies are dropped; the former data it moved aside is the operator's. */
async function leftovers(dataDir: string): Promise<void> {
  const names = fs.existsSync(dataDir) ? fs.readdirSync(dataDir) : [];
  const replaced = names.filter((n) => n.includes(REPLACED));
  if (replaced.length > 0)
    throw new Error(
      `${dataDir} holds ${replaced.join(", ")} from a restore cut short: the former data, moved aside; move it back (drop the ${REPLACED}) or remove it, then run restore again`,
    );
  for (const n of names.filter((x) => x.endsWith(STAGED)))
    await fsp.rm(path.join(dataDir, n), { recursive: true, force: true });
}

/** Refuses a data directory whose database a process (a running peer, a maintenance command) has open. */
function refuseRunning(dataDir: string): void {
  const holders = processesHolding(DB_FILES.map((f) => path.join(dataDir, f)));
  if (holders.length > 0)
    throw new Error(
      `${dataDir} is in use by process ${holders.join(", ")} (a running cloud-peer?): stop it, then restore`,
    );
}

export async function restoreCommand(
  opts: { from: string; force?: boolean } & StoreFlags,
): Promise<{ dataDir: string; createdAt: string }> {
  const from = path.resolve(opts.from);
  const config = storeConfig(opts, { mustExist: false });
  refusePostgres(
    config,
    "restore a pg_dump with pg_restore or psql; restore puts an SQLite backup in a data directory",
  );
  const dataDir = config.dataDir;
  if (from === dataDir) throw new Error("--from and --data name the same directory");
  const manifest = readBackup(from);
  refuseRunning(dataDir);
  const existed = fs.existsSync(dataDir);
  if (!isEmptyDir(dataDir) && !opts.force)
    throw new Error(
      `${dataDir} is not empty: restore into an empty or new directory, or give --force to replace the peer data there (stop its peer first)`,
    );
  await leftovers(dataDir);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = path.join(dataDir, DATA_DB);
  try {
    await fsp.copyFile(path.join(from, DATA_DB), `${db}${STAGED}`);
    await fsp.chmod(`${db}${STAGED}`, 0o600);
    await checkStoreCopy(
      `${db}${STAGED}`,
      modules.flatMap((m) => m.migrations ?? []).map((m) => m.version),
    );
    await syncPath(`${db}${STAGED}`);
    for (const entry of [DATA_CHUNKS, ...PLAIN_ENTRIES]) {
      const src = path.join(from, entry);
      if (fs.existsSync(src))
        await fsp.cp(src, path.join(dataDir, `${entry}${STAGED}`), { recursive: true, preserveTimestamps: true });
    }
  } catch (e) {
    for (const n of fs.readdirSync(dataDir).filter((x) => x.endsWith(STAGED)))
      await fsp.rm(path.join(dataDir, n), { recursive: true, force: true });
    if (!existed) await fsp.rm(dataDir, { recursive: true, force: true });
    throw e;
  }
  // Everything is staged and checked: the old entries move aside, the new ones in, the database last.
  const own = [...DB_FILES, DATA_CHUNKS, ...PLAIN_ENTRIES].filter((e) => fs.existsSync(path.join(dataDir, e)));
  for (const entry of own) await fsp.rename(path.join(dataDir, entry), path.join(dataDir, aside(entry)));
  for (const entry of [DATA_CHUNKS, ...PLAIN_ENTRIES])
    if (fs.existsSync(path.join(dataDir, `${entry}${STAGED}`)))
      await fsp.rename(path.join(dataDir, `${entry}${STAGED}`), path.join(dataDir, entry));
  await fsp.rename(`${db}${STAGED}`, db);
  await syncPath(dataDir);
  for (const entry of own) await fsp.rm(path.join(dataDir, aside(entry)), { recursive: true, force: true });
  return { dataDir, createdAt: manifest.created_at };
}

/** Where an old entry waits while the new ones go in: the database's WAL keeps its name's form (`<db>-wal`). */
const aside = (entry: string) =>
  entry.startsWith(DATA_DB) ? `${DATA_DB}${REPLACED}${entry.slice(DATA_DB.length)}` : `${entry}${REPLACED}`;

export function register(program: Command): void {
  const restore = program
    .command("restore")
    .description("put a backup in place as a peer's data directory (stop the peer first; SQLite only)")
    .requiredOption("--from <path>", "the backup directory (made by cloud-peer backup)")
    .option("--force", "replace the peer data in a non-empty data directory");
  storeCommand<{ from: string; force?: boolean }>(
    restore,
    async (opts) => {
      const r = await restoreCommand(opts);
      process.stdout.write(`restored the backup of ${r.createdAt} into ${r.dataDir}\n`);
    },
    "data directory to restore into (env CLOUD_DATA); must be empty unless --force",
  );
}
