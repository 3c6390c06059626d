// Large chunk payloads written once, outside SQLite: one append-only file per sequence (`<dir>/<id>.chunks`),
// and a row per chunk holding its offset and length there. In SQLite such a payload was written twice (WAL,
// then checkpoint) into overflow pages; here it is one write and one fdatasync.
//
// Consistency: a payload is written and fdatasync'ed before the transaction that references it commits,
// so a committed row always finds its bytes. Bytes whose transaction did not commit stay unreferenced at
// the file's end. Sequence ids are AUTOINCREMENT, so a file never passes to another sequence once its
// sequence committed; files of deleted sequences are removed after the delete commits, and any left by a
// crash are swept at start.
import fs from "node:fs";
import fsp, { type FileHandle } from "node:fs/promises";
import path from "node:path";
import { alignUp, O_DIRECT, writeDirect } from "./direct-write.js";

interface Writer {
  fh: FileHandle;
  /** Where the next payload goes: the file's size, plus what appends under way will add. */
  end: number;
  /** The last append (each waits for the one before; the handle closes only after it settles). */
  last: Promise<void>;
  /** Opened with O_DIRECT: appends start aligned and are padded (direct-write.ts). */
  direct: boolean;
  file: string;
}

/**
 * Payloads larger than this (one database page) go to files; smaller ones stay in their row, where SQLite
 * writes them cheaply and a small chunk's commit needs no fsync of its own.
 */
export const INLINE_MAX = 16 * 1024;
/** Write handles kept open at most (least recently used closed). */
const MAX_WRITERS = 64;
const FILE = /^(\d+)\.chunks$/;

/** The name of a sequence's payload file in the payload directory. */
export const payloadFileName = (seqId: number) => `${seqId}.chunks`;

export interface PayloadRef {
  sequence_id: number;
  file_offset: number;
  file_length: number;
}

/** The fsyncs that make payloads durable (a seam: tests count them). */
export interface PayloadSyncs {
  /** A payload file's bytes (and its size) on disk. */
  file(fh: FileHandle): Promise<void>;
  /** A directory's entries on disk (a file or directory created in it). */
  dir(dir: string): Promise<void>;
}

export const fsSyncs: PayloadSyncs = {
  file: (fh) => fh.datasync(),
  dir: async (dir) => {
    const d = await fsp.open(dir, "r");
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  },
};

export class PayloadFiles {
  private readonly writers = new Map<number, Promise<Writer>>();

  private constructor(
    readonly dir: string,
    private readonly syncs: PayloadSyncs,
    /** Payloads up to this size stay in their row (Infinity: all of them, as on PostgreSQL). */
    readonly inlineMax: number,
  ) {}

  static async open(dir: string, opts: { syncs?: PayloadSyncs; inlineMax?: number } = {}): Promise<PayloadFiles> {
    const syncs = opts.syncs ?? fsSyncs;
    const created = await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
    // Directories made now: their entries must reach the disk too, or a power cut loses every file below them.
    if (created !== undefined) {
      const top = path.dirname(path.resolve(created));
      for (let d = path.dirname(path.resolve(dir)); ; d = path.dirname(d)) {
        await syncs.dir(d);
        if (d === top || d === path.dirname(d)) break;
      }
    }
    return new PayloadFiles(dir, syncs, opts.inlineMax ?? INLINE_MAX);
  }

  private fileOf(seqId: number): string {
    return path.join(this.dir, payloadFileName(seqId));
  }

  private writer(seqId: number): Promise<Writer> {
    let w = this.writers.get(seqId);
    if (w) {
      this.writers.delete(seqId);
      this.writers.set(seqId, w);
      return w;
    }
    w = (async () => {
      const file = this.fileOf(seqId);
      const { fh, direct } = await openForAppend(file);
      const { size } = await fh.stat();
      // A new file's directory entry must reach the disk too before a commit can reference it.
      const created = size === 0 ? this.syncs.dir(this.dir) : Promise.resolve();
      return { fh, end: direct ? alignUp(size) : size, last: created, direct, file };
    })();
    const opened = w;
    this.writers.set(seqId, opened);
    opened.catch(() => {
      if (this.writers.get(seqId) === opened) this.writers.delete(seqId);
    });
    if (this.writers.size > MAX_WRITERS) void this.drop(this.writers.keys().next().value!);
    return w;
  }

  /** Forgets a write handle and closes it once its appends settle. */
  private drop(seqId: number): Promise<void> {
    const w = this.writers.get(seqId);
    this.writers.delete(seqId);
    return w
      ? w
          .then((x) =>
            x.last.then(
              () => x.fh.close(),
              () => x.fh.close(),
            ),
          )
          .catch(() => undefined)
      : Promise.resolve();
  }

  /**
   * Appends payloads at the end of the sequence's file. `offsets` are known at once (rows can be written
   * meanwhile); `synced` resolves once the bytes are on disk, and must before the rows commit.
   */
  async append(seqId: number, payloads: readonly Buffer[]): Promise<{ offsets: number[]; synced: Promise<void> }> {
    const current = this.writer(seqId);
    const w = await current;
    const start = w.end;
    const offsets: number[] = [];
    for (const p of payloads) {
      offsets.push(w.end);
      w.end += p.length;
    }
    // After a failed append the ones behind it fail too (their offsets assumed it), and the handle is
    // dropped: the file's end is unknown, so the next append opens it again and asks.
    if (w.direct) w.end = alignUp(w.end);
    const synced = w.last.then(() => writePayloads(w, payloads, start)).then(() => this.syncs.file(w.fh));
    w.last = synced;
    synced.catch(() => {
      if (this.writers.get(seqId) === current) void this.drop(seqId);
    });
    return { offsets, synced };
  }

  /** The payloads of rows stored in files, in row order; a file cut short or missing rejects that row's entry. */
  async read(rows: readonly PayloadRef[]): Promise<Array<PromiseSettledResult<Buffer>>> {
    const handles = new Map<number, Promise<FileHandle>>();
    const open = (id: number) => handles.get(id) ?? handles.set(id, fsp.open(this.fileOf(id), "r")).get(id)!;
    try {
      return await Promise.allSettled(
        rows.map(async (r) => readExactly(await open(r.sequence_id), r.file_offset, r.file_length)),
      );
    } finally {
      await Promise.allSettled([...handles.values()].map((h) => h.then((fh) => fh.close())));
    }
  }

  /** Removes the files of deleted sequences (after the delete committed). */
  async remove(seqIds: Iterable<number>): Promise<void> {
    for (const id of seqIds) {
      await this.drop(id);
      await fsp.rm(this.fileOf(id), { force: true });
    }
  }

  /** Removes files whose sequence no longer exists (a crash between a delete's commit and its removal). */
  async sweep(live: ReadonlySet<number>): Promise<number[]> {
    const gone = (await fsp.readdir(this.dir))
      .map((n) => FILE.exec(n))
      .filter((m) => m !== null)
      .map((m) => Number(m[1]))
      .filter((id) => !live.has(id));
    await this.remove(gone);
    return gone;
  }

  async close(): Promise<void> {
    await Promise.all([...this.writers.keys()].map((id) => this.drop(id)));
  }
}

/** Opens a payload file for appends, with O_DIRECT where the file system takes it (not tmpfs, say). */
async function openForAppend(file: string): Promise<{ fh: FileHandle; direct: boolean }> {
  const flags = fs.constants.O_RDWR | fs.constants.O_CREAT;
  if (O_DIRECT !== 0) {
    try {
      return { fh: await fsp.open(file, flags | O_DIRECT, 0o600), direct: true };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EINVAL") throw e;
    }
  }
  return { fh: await fsp.open(file, flags, 0o600), direct: false };
}

/** Writes an append's payloads at `position`; a file that refuses direct writes goes on buffered. */
async function writePayloads(w: Writer, payloads: readonly Buffer[], position: number): Promise<void> {
  if (w.direct) {
    try {
      await writeDirect(w.fh, payloads, position);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EINVAL") throw e;
      // Alignment this file system does not take: on buffered from here (the offsets handed out stay valid).
      const old = w.fh;
      w.fh = await fsp.open(w.file, fs.constants.O_RDWR, 0o600);
      w.direct = false;
      await old.close();
    }
  }
  await writeAll(w.fh, payloads, position);
}

async function writeAll(fh: FileHandle, bufs: readonly Buffer[], position: number): Promise<void> {
  let rest = bufs.filter((b) => b.length > 0);
  while (rest.length > 0) {
    let { bytesWritten } = await fh.writev(rest, position);
    if (bytesWritten === 0) throw new Error("payload file write made no progress");
    position += bytesWritten;
    // A short write (rare for regular files): go on from where it stopped.
    while (rest.length > 0 && bytesWritten >= rest[0]!.length) bytesWritten -= rest.shift()!.length;
    if (bytesWritten > 0) rest = [rest[0]!.subarray(bytesWritten), ...rest.slice(1)];
  }
}

async function readExactly(fh: FileHandle, offset: number, length: number): Promise<Buffer> {
  const b = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(b, got, length - got, offset + got);
    if (bytesRead === 0) throw new Error(`the payload file ends before byte ${offset + length}`);
    got += bytesRead;
  }
  return b;
}
