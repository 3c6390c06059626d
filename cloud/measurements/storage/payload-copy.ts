// Payload files for a backup: each copied up to the last byte the database snapshot's rows reference.
// Files are append-only and a payload is on disk before its row commits, so a copy taken after the
// snapshot holds every referenced byte; it is cut back to the snapshot's end so the copy holds nothing
// the snapshot does not know of. A file gone meanwhile belonged to a sequence deleted after the snapshot.
import fsp from "node:fs/promises";
import path from "node:path";
import { payloadFileName } from "./payload-files.js";

/** A payload file the snapshot references is missing or shorter than referenced: take a new snapshot. */
export class PayloadChangedError extends Error {}

/** Copies `<from>/<id>.chunks` to `<to>/` for every sequence in `ends`, each cut to its end; fsyncs each copy. */
export async function copyPayloadPrefixes(
  from: string,
  to: string,
  ends: ReadonlyMap<number, number>,
): Promise<{ files: number; bytes: number }> {
  await fsp.mkdir(to, { recursive: true, mode: 0o700 });
  let bytes = 0;
  for (const [seqId, end] of ends) {
    const src = path.join(from, payloadFileName(seqId));
    const dest = path.join(to, payloadFileName(seqId));
    try {
      // copyFile lets the kernel copy (copy_file_range, or a reflink where the file system has them).
      await fsp.copyFile(src, dest);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT")
        throw new PayloadChangedError(`payload file ${payloadFileName(seqId)} was removed during the backup`);
      throw e;
    }
    const fh = await fsp.open(dest, "r+");
    try {
      const { size } = await fh.stat();
      if (size < end)
        throw new PayloadChangedError(`payload file ${payloadFileName(seqId)} holds ${size} of ${end} bytes`);
      await fh.truncate(end);
      await fh.chmod(0o600);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    bytes += end;
  }
  return { files: ends.size, bytes };
}
