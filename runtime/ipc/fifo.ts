// FIFO creation. Node has no mkfifo(3): the coreutils `mkfifo` command does it.
import { execFile } from "node:child_process";
import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * Makes sure a FIFO exists at `path` (creating parent directories). An existing FIFO is kept (a connector
 * may already have it open); an existing non-FIFO file is an error, never replaced.
 */
export async function ensureFifo(path: string, mode = 0o660): Promise<void> {
  const st = await stat(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT") return undefined;
    throw e;
  });
  if (st !== undefined) {
    if (st.isFIFO()) return;
    throw new Error(`${path} exists and is not a FIFO`);
  }
  await mkdir(dirname(path), { recursive: true });
  try {
    await run("mkfifo", ["-m", mode.toString(8), path]);
  } catch (e) {
    // Another channel or process may have created it in the meantime.
    const again = await stat(path).catch(() => undefined);
    if (again?.isFIFO()) return;
    throw new Error(`mkfifo ${path} failed: ${(e as Error).message}`);
  }
}
