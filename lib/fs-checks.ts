// Small file-system helpers both commands' backups use.
import fs from "node:fs";
import fsp from "node:fs/promises";

/** True when `dir` is missing or an empty directory (where a backup or a restore may write). */
export function isEmptyDir(dir: string): boolean {
  try {
    return fs.readdirSync(dir).length === 0;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw e;
  }
}

/** fsyncs a file or directory (a backup must survive a crash right after it reports success). */
export async function syncPath(p: string): Promise<void> {
  const fh = await fsp.open(p, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
