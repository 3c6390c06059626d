// Whether the data directory has room for writes, for the readiness probe. The cloud learns that storage is
// full from the writes themselves (isStorageFull: ENOSPC, EDQUOT, SQLITE_FULL, answered 507 or PROCESS_FAILED);
// such a failure is remembered until a later write stores data, or until the clients' Retry-After has passed.
// The file system's free space is read too (statfs, one system call), so a disk about to fill shows first.
import fs from "node:fs";

/** Below this many free bytes for unprivileged writers the peer reports storage as full. */
export const MIN_FREE_BYTES = 64 * 1024 * 1024;
/** How long a storage-full failure counts without a successful write since (the Retry-After of the 507). */
export const FULL_MEMORY_MS = 60_000;

export type RoomCheck = { ok: true; freeBytes: number } | { ok: false; reason: string; freeBytes?: number };

export class StorageRoom {
  private fullAt: number | undefined;

  constructor(
    readonly dir: string,
    private readonly minFreeBytes = MIN_FREE_BYTES,
  ) {}

  /** A write failed for lack of space. */
  noteFull(): void {
    this.fullAt = Date.now();
  }

  /** A write stored data: space was found. */
  noteStored(): void {
    this.fullAt = undefined;
  }

  async check(): Promise<RoomCheck> {
    let freeBytes: number | undefined;
    try {
      const s = await fs.promises.statfs(this.dir);
      freeBytes = s.bavail * s.bsize;
    } catch (e) {
      return {
        ok: false,
        reason: `the data directory cannot be read (${(e as NodeJS.ErrnoException).code ?? "error"})`,
      };
    }
    if (this.fullAt !== undefined && Date.now() - this.fullAt < FULL_MEMORY_MS) {
      const ago = Math.round((Date.now() - this.fullAt) / 1000);
      return { ok: false, reason: `storage is full: a write failed for lack of space ${ago} s ago`, freeBytes };
    }
    if (freeBytes < this.minFreeBytes)
      return {
        ok: false,
        reason: `storage is full: ${freeBytes} bytes free, below the ${this.minFreeBytes} the peer keeps in reserve`,
        freeBytes,
      };
    return { ok: true, freeBytes };
  }
}
