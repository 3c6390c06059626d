// Payload file appends with O_DIRECT: the bytes go from an aligned staging area to the disk, not through
// the page cache. Buffered appends made the kernel fill ever new page-cache pages with data the cloud
// rarely reads back soon, and that first touch of memory cost far more system time than the direct write
// (figures in docs/bench-history.md, fifth session). The file's durability is unchanged: an fdatasync
// still follows (the disk's write cache, and the file's size and extents).
//
// O_DIRECT needs the memory address, the file offset and the length aligned to the device's block size:
// appends start at a multiple of ALIGN and are padded with zeros to one, and the staging area is
// WebAssembly memory, which starts on a page boundary (a Buffer's address is not known from JavaScript).
import fs from "node:fs";
import type { FileHandle } from "node:fs/promises";

/** Alignment of direct appends (the largest logical block size of common disks; a page). */
export const ALIGN = 4096;
/** Bytes staged and written at a time. */
const STAGE = 4 * 1024 * 1024;
/**
 * Staging areas at most, shared by all appends (one each while it writes; others wait). Each is a
 * WebAssembly memory, for which V8 reserves ~10 GB of address space: a fixed few, made once and kept.
 */
const STAGES = 8;

/** O_DIRECT where the platform has it (Linux); 0 elsewhere, and then appends are buffered. */
export const O_DIRECT: number = (fs.constants as { O_DIRECT?: number }).O_DIRECT ?? 0;

export const alignUp = (n: number) => Math.ceil(n / ALIGN) * ALIGN;

const idle: Buffer[] = [];
const waiting: Array<(b: Buffer) => void> = [];
let made = 0;

function takeStage(): Promise<Buffer> {
  const b = idle.pop();
  if (b !== undefined) return Promise.resolve(b);
  if (made < STAGES) {
    made++;
    return Promise.resolve(Buffer.from(new WebAssembly.Memory({ initial: STAGE / 65536 }).buffer));
  }
  return new Promise((resolve) => waiting.push(resolve));
}

function giveStage(b: Buffer): void {
  const next = waiting.shift();
  if (next) next(b);
  else idle.push(b);
}

/**
 * Writes `bufs` back to back at `position` (a multiple of ALIGN) through a file opened with O_DIRECT, the
 * last block padded with zeros. Resolves with the end of what was written (a multiple of ALIGN).
 */
export async function writeDirect(fh: FileHandle, bufs: readonly Uint8Array[], position: number): Promise<number> {
  if (position % ALIGN !== 0) throw new Error(`direct write at an unaligned position ${position}`);
  const stage = await takeStage();
  try {
    let fill = 0;
    const flush = async (len: number) => {
      let done = 0;
      while (done < len) {
        const { bytesWritten } = await fh.write(stage, done, len - done, position + done);
        if (bytesWritten <= 0 || bytesWritten % ALIGN !== 0)
          throw new Error(`direct write of ${len - done} bytes wrote ${bytesWritten}`);
        done += bytesWritten;
      }
      position += len;
      fill = 0;
    };
    for (const b of bufs) {
      for (let at = 0; at < b.length; ) {
        const n = Math.min(b.length - at, STAGE - fill);
        stage.set(b.subarray(at, at + n), fill);
        fill += n;
        at += n;
        if (fill === STAGE) await flush(STAGE);
      }
    }
    if (fill > 0) {
      const padded = alignUp(fill);
      stage.fill(0, fill, padded);
      await flush(padded);
    }
    return position;
  } finally {
    giveStage(stage);
  }
}
