// The agent's files are its own: the settings hold the edge's client secret and the queue holds measured
// data, so directories are created 0700 and LMDB files made 0600 whatever the umask. A directory that
// already existed is left as it is (it may be shared, e.g. /var/lib; the service unit's StateDirectory=
// gives the agent its own), except one the agent made before these rules, recognised by its contents.
import fs from "node:fs";
import path from "node:path";

/** Creates `dir` (and missing parents) with `mode`; returns whether it was created now. */
export function makeDir(dir: string, mode: number): boolean {
  const existed = fs.existsSync(dir);
  fs.mkdirSync(dir, { recursive: true, mode });
  if (!existed) fs.chmodSync(dir, mode);
  return !existed;
}

/** Narrows an existing directory to `mode` when it is ours and holds `marker` (a file only the agent writes). */
export function narrowOwnDir(dir: string, marker: string, mode: number): void {
  try {
    const st = fs.statSync(dir);
    if (st.uid === process.getuid?.() && (st.mode & 0o1000) === 0 && fs.existsSync(path.join(dir, marker))) fs.chmodSync(dir, mode);
  } catch {
    // not there or not ours: left alone
  }
}

/** An LMDB environment opened at `file` (its data file and its -lock file) made 0600. */
export function makeLmdbPrivate(file: string): void {
  for (const f of [file, `${file}-lock`]) {
    try {
      fs.chmodSync(f, 0o600);
    } catch {
      // the lock file may not exist (read-only or no-lock opens)
    }
  }
}
