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
  else narrowExisting(dir, mode);
  return !existed;
}

/**
 * A folder made before the agent (by hand, an installer, an old version) keeps whatever mode it had: narrowed to
 * `mode` (never widened) when the agent's user owns it; another user's (a shared or sticky folder such as /tmp)
 * is not the agent's to change, so it is left alone with a warning naming it.
 */
function narrowExisting(dir: string, mode: number): void {
  const st = fs.statSync(dir);
  const now = st.mode & 0o777;
  if ((now & ~mode) === 0) return;
  if (st.uid === process.getuid?.() && (st.mode & 0o1000) === 0) return fs.chmodSync(dir, now & mode);
  const octal = (m: number) => `0${m.toString(8)}`;
  const whose =
    st.uid === process.getuid?.() ? "is a shared (sticky) folder" : `belongs to uid ${st.uid}, not this user`;
  console.warn(
    `warning: ${dir} has mode ${octal(now)} and ${whose}: others may read or change the agent's files there; make it ${octal(mode)} or choose another folder`,
  );
}

/** Narrows an existing directory to `mode` when it is ours and holds `marker` (a file only the agent writes). */
export function narrowOwnDir(dir: string, marker: string, mode: number): void {
  try {
    const st = fs.statSync(dir);
    if (st.uid === process.getuid?.() && (st.mode & 0o1000) === 0 && fs.existsSync(path.join(dir, marker)))
      fs.chmodSync(dir, mode);
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
