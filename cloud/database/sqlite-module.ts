// sqlite3 is loaded when the cloud first opens a database, never at import: it is an optional dependency
// (a native module whose binary is downloaded or built at install), so the edge agent installs and runs
// where it cannot be had, and a cloud peer without it stops with one clear line instead of a stack trace.
import type sqlite3 from "sqlite3";

export type Sqlite3Module = typeof sqlite3;

/** sqlite3 cannot be loaded on this machine; the message says what to do. */
export class StorageUnavailable extends Error {}

const platform = () => `${process.platform}-${process.arch}`;
const HOW =
  "reinstall the package with build tools present (python3, make, a C++ compiler) so npm can build it (docs/platforms.md)";

let loading: Promise<Sqlite3Module> | undefined;

export function loadSqlite3(): Promise<Sqlite3Module> {
  return (loading ??= import("sqlite3").then(
    (m) => m.default,
    (err: NodeJS.ErrnoException) => {
      loading = undefined;
      const missing = err.code === "ERR_MODULE_NOT_FOUND" && /'sqlite3'/.test(err.message);
      throw new StorageUnavailable(
        missing
          ? `storage: the sqlite3 module is not installed for ${platform()}; ${HOW}`
          : `storage: the sqlite3 module cannot be loaded on ${platform()} (${firstLine(err)}); ${HOW}`,
      );
    },
  ));
}

const firstLine = (err: Error) =>
  String(err?.message ?? err)
    .split("\n")[0]!
    .slice(0, 200);
