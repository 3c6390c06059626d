// The ingest journal's files (ingest/ingest-journal.ts): append-only segments `<dir>/<n>.journal`, a record being
// `[u32 body length][u32 CRC-32 of the body][body]`. One write and one fdatasync per record (on the power-loss
// durability), as a minimal receiver pays: no page, index or checkpoint of a database. An apply first seals the
// segment being written (appends go to a new one) and removes the sealed segments once their records are applied,
// so a restart applies again nothing applied before (a measurement deleted since would come back). A crash leaves at
// most a torn last record, which its length or CRC gives away.
import fsp from "node:fs/promises";
import path from "node:path";
import zlib from "node:zlib";
import type { Durability } from "../../database/db.js";
import { holdLock, type HeldLock } from "../../../lib/dir-lock.js";

const SUFFIX = ".journal";
/** The journal's folder in a data directory. */
export const JOURNAL_DIR = "ingest-journal";
/** The lock of the process that holds the journal (lib/dir-lock.ts). */
const LOCK_FILE = "journal.lock";

interface Segment {
  n: number;
  file: string;
  fh: fsp.FileHandle | undefined;
  size: number;
  lastId: number;
}

/** Another live process holds the journal (a second peer serving the same data directory). */
export class JournalInUse extends Error {}

export interface JournalRecord {
  id: number;
  body: Buffer;
}

export class JournalFiles {
  private nextId = 1;
  private writing: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly dir: string,
    private readonly sync: boolean,
    private readonly segments: Segment[],
    private readonly lock: HeldLock,
  ) {}

  /**
   * Opens the journal in `dir` (made if missing): the records a crash left, where a segment ends in bytes that are
   * no whole record (`torn`), and a new segment to append to.
   */
  static async open(
    dir: string,
    durability: Durability,
  ): Promise<{ files: JournalFiles; left: JournalRecord[]; torn: Array<{ file: string; bytes: number }> }> {
    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
    // One process appends, applies and trims: a second one would apply and remove segments the first still writes.
    const lock = await holdLock(
      path.join(dir, LOCK_FILE),
      (pid) => new JournalInUse(`the ingest journal in ${dir} is held by process ${pid}`),
    );
    try {
      return await JournalFiles.read(dir, durability, lock);
    } catch (e) {
      await lock.release();
      throw e;
    }
  }

  private static async read(dir: string, durability: Durability, lock: HeldLock) {
    const found = await segmentNumbers(dir);
    const segments: Segment[] = [];
    const left: JournalRecord[] = [];
    const torn: Array<{ file: string; bytes: number }> = [];
    for (const n of found) {
      const file = path.join(dir, `${n}${SUFFIX}`);
      const data = await fsp.readFile(file);
      const { records, end } = readRecords(data);
      if (end < data.length) torn.push({ file, bytes: data.length - end });
      for (const body of records) left.push({ id: left.length + 1, body });
      segments.push({ n, file, fh: undefined, size: 0, lastId: left.length });
    }
    const files = new JournalFiles(dir, durability === "power-loss", segments, lock);
    files.nextId = left.length + 1;
    await files.startSegment((found.at(-1) ?? 0) + 1);
    return { files, left, torn };
  }

  /** Appends a record; resolves with its id once it is written (and synced, on the power-loss durability). */
  append(body: Buffer): Promise<number> {
    const next = this.writing.then(async () => {
      const seg = this.segments[this.segments.length - 1]!;
      const head = Buffer.allocUnsafe(8);
      head.writeUInt32BE(body.length, 0);
      head.writeUInt32BE(zlib.crc32(body), 4);
      await seg.fh!.writev([head, body], seg.size);
      seg.size += 8 + body.length;
      if (this.sync) await seg.fh!.datasync();
      seg.lastId = this.nextId++;
      return seg.lastId;
    });
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** Appends go to a new segment from now on (when the current one holds records); the id of the last record. */
  seal(): Promise<number> {
    const next = this.writing.then(async () => {
      if (this.segments[this.segments.length - 1]!.size > 0)
        await this.startSegment(this.segments[this.segments.length - 1]!.n + 1);
      return this.nextId - 1;
    });
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** Every record up to `id` is applied: the sealed segments holding only such records go. */
  trim(id: number): Promise<void> {
    const next = this.writing.then(async () => {
      let removed = false;
      while (this.segments.length > 1 && this.segments[0]!.lastId <= id) {
        const seg = this.segments.shift()!;
        await seg.fh?.close();
        await fsp.rm(seg.file, { force: true });
        removed = true;
      }
      // A segment brought back by a power cut would be applied again.
      if (removed && this.sync) await syncDir(this.dir);
    });
    this.writing = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.writing;
    for (const seg of this.segments) await seg.fh?.close();
    for (const seg of this.segments) seg.fh = undefined;
    await this.lock.release();
  }

  private async startSegment(n: number): Promise<void> {
    const file = path.join(this.dir, `${n}${SUFFIX}`);
    const fh = await fsp.open(file, "wx", 0o600);
    if (this.sync) await syncDir(this.dir);
    this.segments.push({ n, file, fh, size: 0, lastId: this.nextId - 1 });
  }
}

/** The whole records of a segment, up to the first torn or damaged one, and where they end. */
export function readRecords(data: Buffer): { records: Buffer[]; end: number } {
  const records: Buffer[] = [];
  let p = 0;
  while (p + 8 <= data.length) {
    const len = data.readUInt32BE(p);
    const crc = data.readUInt32BE(p + 4);
    if (p + 8 + len > data.length) break;
    const body = data.subarray(p + 8, p + 8 + len);
    if (zlib.crc32(body) !== crc) break;
    records.push(body);
    p += 8 + len;
  }
  return { records, end: p };
}

/** The numbers of the journal's segments in `dir`, in order (none when it does not exist). */
async function segmentNumbers(dir: string): Promise<number[]> {
  const names = await fsp.readdir(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT") return [] as string[];
    throw e;
  });
  return names
    .filter((f) => f.endsWith(SUFFIX) && /^\d+$/.test(f.slice(0, -SUFFIX.length)))
    .map((f) => Number(f.slice(0, -SUFFIX.length)))
    .sort((a, b) => a - b);
}

/** Whether the journal in `dir` holds a whole record (chunks acknowledged and not yet applied). */
export async function journalHoldsRecords(dir: string): Promise<boolean> {
  for (const n of await segmentNumbers(dir))
    if (readRecords(await fsp.readFile(path.join(dir, `${n}${SUFFIX}`))).records.length > 0) return true;
  return false;
}

/**
 * Copies the journal's segments from `dir` into `to` while a peer appends and trims: a segment removed meanwhile
 * was applied (so it is in a database copied after this), and a record being written is left out by its CRC.
 */
export async function copyJournal(dir: string, to: string): Promise<void> {
  const found = await segmentNumbers(dir);
  if (found.length === 0) return;
  await fsp.mkdir(to, { recursive: true, mode: 0o700 });
  for (const n of found)
    await fsp
      .copyFile(path.join(dir, `${n}${SUFFIX}`), path.join(to, `${n}${SUFFIX}`))
      .catch((e: NodeJS.ErrnoException) => {
        if (e.code !== "ENOENT") throw e;
      });
}

/** Makes a file's creation or removal in `dir` durable; off the main thread, which a sync would hold for a disk's flush. */
async function syncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
