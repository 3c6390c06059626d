// Maintenance commands (token create, keys ...) work on an existing peer's data. Pointed at a wrong
// directory they must not create a fresh database with a new `admin` (whose temporary password would
// end up in the output a script reads as the token).
import fs from "node:fs";
import path from "node:path";
import { isPostgresUrl } from "../database/open.js";

/** What a data directory holds (besides outbox/, mails already sent when no SMTP server is set). */
export const DATA_DB = "cloud.db";
/** Large chunk payloads, one append-only file per sequence (cloud/measurements/storage/payload-files.ts). */
export const DATA_CHUNKS = "chunks";
/** Chunks acknowledged and not yet applied to the database (cloud/measurements/storage/journal-files.ts). */
export { JOURNAL_DIR as DATA_JOURNAL } from "../measurements/storage/journal-files.js";
/** The self-signed QUIC certificate made at the first QUIC start (when no --iscp-quic-cert is given). */
export const DATA_QUIC = "quic";

/** An SQLite data directory must hold its database; a PostgreSQL database is the operator's to name (`database`). */
export function requireDatabase(dataDir: string, database = "sqlite:"): void {
  if (isPostgresUrl(database)) return;
  const file = path.join(dataDir, DATA_DB);
  try {
    fs.statSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EACCES")
      throw new Error(
        `cannot read ${file}: permission denied to this user (uid ${process.getuid?.()}); run the command as the service's user (e.g. sudo -u cloud-peer)`,
      );
    throw new Error(
      `no cloud-peer database at ${file} (start cloud-peer once with this --data, or pass the right --data)`,
    );
  }
}

/**
 * Processes with one of `files` open (a running peer holds its database open), found through /proc on Linux:
 * no lock file to go stale after a crash. Other users' processes are seen only by root (who can also write
 * any data directory); elsewhere the list is empty.
 */
export function processesHolding(files: string[]): number[] {
  const real = (dir: string) => {
    try {
      return fs.realpathSync(dir);
    } catch {
      return path.resolve(dir);
    }
  };
  // /proc shows the real path; the files may not exist, their directory does.
  const wanted = new Set(files.map((f) => path.join(real(path.dirname(f)), path.basename(f))));
  let pids: string[];
  try {
    pids = fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    if (
      fds.some((fd) => {
        try {
          return wanted.has(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
        } catch {
          return false;
        }
      })
    )
      found.push(Number(pid));
  }
  return found;
}
