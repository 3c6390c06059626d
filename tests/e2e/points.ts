// Numbered points for end-to-end tests: each payload starts with its index, so a test can tell from the
// cloud's data which points arrived, how often, and in which order.
import type { FileHandle } from "node:fs/promises";
import { encodeIscpV2Frame } from "../../runtime/ipc/iscp-v2-compat.js";
import type { CloudPoint, Stack } from "./stack.js";

/** An iscp-v2-compat frame whose payload (`size` bytes, at least 4) starts with `index`. */
export function numberedFrame(index: number, name = "n", size = 8): Buffer {
  const payload = Buffer.alloc(Math.max(4, size), index & 0xff);
  payload.writeUInt32BE(index, 0);
  const [sec, nsec] = process.hrtime();
  return encodeIscpV2Frame(sec, nsec, "bytes", name, payload);
}

/** Writes points `from`..`to - 1`, a batch at a time. */
export async function writeNumbered(
  fh: FileHandle,
  from: number,
  to: number,
  o: { name?: string; size?: number } = {},
): Promise<void> {
  const BATCH = 100;
  for (let i = from; i < to; i += BATCH) {
    const frames: Buffer[] = [];
    for (let j = i; j < Math.min(to, i + BATCH); j++) frames.push(numberedFrame(j, o.name, o.size));
    await fh.write(Buffer.concat(frames));
  }
}

export const indexOf = (p: CloudPoint) => p.payload.readUInt32BE(0);

/** Every numbered point the cloud holds, over all measurements, in index order. */
export async function cloudIndices(s: Pick<Stack, "measurements" | "points">, name?: string): Promise<number[]> {
  const out: number[] = [];
  for (const m of await s.measurements()) {
    for (const p of await s.points(m.uuid)) if (name === undefined || p.name.endsWith(name)) out.push(indexOf(p));
  }
  return out.sort((a, b) => a - b);
}

export const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
