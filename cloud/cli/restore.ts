// `cloud-peer restore --from PATH --data DIR [--force]`: puts a backup (cloud-peer backup) in place as a
// peer's data directory. An empty (or new) directory only, unless --force: then the peer's own files there
// are replaced (the peer must be stopped). The database goes in last: a restore cut short leaves no
// database, so the next start cannot mistake half a restore for data (run the restore again).
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { Schema } from "effect";
import { payloadFileName } from "../measurements/storage/payload-files.js";
import { isEmptyDir, syncPath } from "../../lib/fs-checks.js";
import { MANIFEST, PLAIN_ENTRIES } from "./backup.js";
import { DATA_CHUNKS, DATA_DB } from "./data-dir.js";
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
    if (size !== length) throw new Error(`the backup is damaged: ${name} should hold ${length} bytes (${size < 0 ? "missing" : `has ${size}`})`);
  }
  return manifest;
}

/** The peer's own entries in a data directory, removed by --force (the WAL of an old database above all). */
const OWN_ENTRIES = [DATA_DB, `${DATA_DB}-wal`, `${DATA_DB}-shm`, `${DATA_DB}-journal`, DATA_CHUNKS, ...PLAIN_ENTRIES];

export async function restoreCommand(opts: { from: string; force?: boolean } & StoreFlags): Promise<{ dataDir: string; createdAt: string }> {
  const from = path.resolve(opts.from);
  const config = storeConfig(opts, { mustExist: false });
  refusePostgres(config, "restore a pg_dump with pg_restore or psql; restore puts an SQLite backup in a data directory");
  const dataDir = config.dataDir;
  if (from === dataDir) throw new Error("--from and --data name the same directory");
  const manifest = readBackup(from);
  if (!isEmptyDir(dataDir)) {
    if (!opts.force) throw new Error(`${dataDir} is not empty: restore into an empty or new directory, or give --force to replace the peer data there (stop its peer first)`);
    for (const entry of OWN_ENTRIES) await fsp.rm(path.join(dataDir, entry), { recursive: true, force: true });
  }
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  for (const entry of [DATA_CHUNKS, ...PLAIN_ENTRIES]) {
    const src = path.join(from, entry);
    if (fs.existsSync(src)) await fsp.cp(src, path.join(dataDir, entry), { recursive: true, preserveTimestamps: true });
  }
  const db = path.join(dataDir, DATA_DB);
  await fsp.copyFile(path.join(from, DATA_DB), `${db}.restoring`);
  await fsp.chmod(`${db}.restoring`, 0o600);
  await syncPath(`${db}.restoring`);
  await fsp.rename(`${db}.restoring`, db);
  await syncPath(dataDir);
  return { dataDir, createdAt: manifest.created_at };
}

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
