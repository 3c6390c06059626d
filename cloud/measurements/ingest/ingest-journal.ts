// The ingest journal (setting `ingest-journal`, SQLite only): a group commit of chunks is made durable as one
// record appended to a journal file (storage/journal-files.ts) and acknowledged then; the chunks are applied to the
// measurement tables a little later, many commits together, so each stream's rows and counters are written once per
// apply rather than once per commit. A fleet of slow edges sends one chunk per stream per commit, and the
// measurement tables' cost is per stream and commit (docs/datapath.md "Many edges"); the journal's cost is one
// record (a write and an fdatasync) per commit.
//
// What the journal promises:
// - An acknowledged chunk is in the journal (synced as the durability setting says) until an apply committed it to
//   cloud.db; after a crash, `recover` applies what is left before the peer serves. An apply is idempotent (a
//   sequence number already stored is skipped), so a crash between an apply and the journal's trim is harmless.
// - Every read or write of the measurement area first waits for the records acknowledged before it (`applied`), so
//   no caller sees a chunk acknowledged and not yet stored.
// - Pending chunks are held in memory up to PENDING_MAX_BYTES; past it a commit waits for the apply.
import type { Logger } from "pino";
import type { Durability } from "../../database/db.js";
import { JournalFiles, type JournalRecord } from "../storage/journal-files.js";
import { journalChunkCount, journalChunks, journalRecord } from "./journal-codec.js";
import type { StreamChunks } from "./shared-commit.js";

/** How long acknowledged chunks wait for their apply when nothing asks for them sooner (a read does), at least. */
export const APPLY_AFTER_MS = 250;
/**
 * ... and at most. An apply's cost is per stream and page it writes, whatever the chunks per stream: while its
 * streams are slow (a fleet's edges, a chunk per stream every 50 ms or more) it waits until a stream has brought
 * about APPLY_STREAM_CHUNKS, up to a second, so a pack holds more than a chunk or five (docs/datapath.md). A fast
 * stream's chunks wait no longer than APPLY_AFTER_MS: a larger apply holds the disk and the thread pool longer,
 * and the acks' p99 rose with it.
 */
export const APPLY_MAX_AFTER_MS = 1_000;
/** Chunks per stream an apply waits for (between APPLY_AFTER_MS and APPLY_MAX_AFTER_MS). */
const APPLY_STREAM_CHUNKS = 16;
/**
 * Chunks applied in one transaction at most (a stream's chunks of more are split). An apply's JavaScript runs in one
 * turn of the event loop, and the acks wait behind it: a quarter of a second of a fleet in two or more applies
 * keeps the acks' p99 lower (docs/datapath.md).
 */
export const APPLY_MAX_CHUNKS = 4_096;
/**
 * Chunks one run takes at most (whole records; one record may hold more), applied in transactions of whole streams
 * of at most APPLY_MAX_CHUNKS: a stream's chunks of the run are written once, not once per record-sized apply
 * (a fleet's stream brings a chunk or two to each record, and an apply costs per stream it writes).
 */
export const RUN_MAX_CHUNKS = 8 * APPLY_MAX_CHUNKS;
/** Bytes of chunks held for their apply before commits wait for it. */
export const PENDING_MAX_BYTES = 64 * 1024 * 1024;
/** How long a failed apply waits before it is tried again. */
const RETRY_MS = 1_000;

interface Pending {
  id: number;
  /** The record: its chunks are read from it when applied (journal-codec.ts `journalChunks`). */
  body: Buffer;
  chunks: number;
  /** When it was recorded (performance.now()): it is due for its apply `afterMs` later. */
  at: number;
}

/** Applies chunks to cloud.db (one transaction); throws if nothing was committed. */
export type ApplyChunks = (streams: StreamChunks[]) => Promise<void>;

export class IngestJournal {
  private readonly pending: Pending[] = [];
  private pendingBytes = 0;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The last record id committed to cloud.db, and who waits for one. */
  private appliedId = 0;
  private lastId = 0;
  private readonly waiters: Array<{ id: number; resolve: () => void }> = [];
  private closed = false;
  /** How long records wait for their apply: set from the streams' pace of the last run (`paced`). */
  private afterMs = APPLY_AFTER_MS;
  /** Applies that failed one after another (logged at warn once per episode). */
  private failedTries = 0;

  private constructor(
    private readonly files: JournalFiles,
    private readonly left: JournalRecord[],
    private readonly apply: ApplyChunks,
    private readonly log: Logger,
  ) {}

  static async open(dir: string, durability: Durability, apply: ApplyChunks, log: Logger): Promise<IngestJournal> {
    const { files, left, torn } = await JournalFiles.open(dir, durability);
    // A write a crash cut short was never acknowledged; anything else there is damage an operator should know of.
    for (const t of torn)
      log.warn(t, "ingest journal: bytes at the end of a segment are not a whole record; they are left out");
    return new IngestJournal(files, left, apply, log);
  }

  /** Applies the records a crash left (before the peer serves); the number of chunks they held. */
  async recover(): Promise<number> {
    let chunks = 0;
    for (const r of this.left.splice(0)) {
      const n = journalChunkCount(r.body);
      chunks += n;
      this.pending.push({ id: r.id, body: r.body, chunks: n, at: 0 });
      this.pendingBytes += r.body.length;
      this.lastId = r.id;
    }
    if (chunks > 0) this.log.info({ chunks }, "applying acknowledged chunks left in the ingest journal");
    await this.applied(Infinity);
    return chunks;
  }

  /** Whether commits should wait for an apply before recording more. */
  get full(): boolean {
    return this.pendingBytes >= PENDING_MAX_BYTES;
  }

  /**
   * Makes the chunks durable in the journal; they are applied later, read from the record (the received frames
   * may go once this returns). Resolves, with the data points the record holds, once they may be acknowledged.
   */
  async record(streams: StreamChunks[]): Promise<number> {
    const record = journalRecord(streams);
    const id = await this.files.append(record.body);
    this.pending.push({ id, body: record.body, chunks: record.chunks, at: performance.now() });
    this.pendingBytes += record.body.length;
    this.lastId = id;
    this.schedule(this.full ? 0 : this.afterMs);
    return record.points;
  }

  /**
   * Resolves once every record made before the call is applied, or after `maxWaitMs` (a full disk may hold an
   * apply back; readers then read what is stored).
   */
  applied(maxWaitMs = 5_000): Promise<void> {
    const id = this.lastId;
    if (this.appliedId >= id) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiter = { id, resolve: () => (clearTimeout(timer), resolve()) };
      // A waiter that gives up leaves the list (while an apply keeps failing, every read would add one).
      const timer = Number.isFinite(maxWaitMs)
        ? setTimeout(() => {
            const i = this.waiters.indexOf(waiter);
            if (i >= 0) this.waiters.splice(i, 1);
            resolve();
          }, maxWaitMs)
        : undefined;
      this.waiters.push(waiter);
      this.schedule(0);
    });
  }

  private schedule(ms: number): void {
    if (this.closed || this.running !== undefined) return;
    if (this.timer !== undefined) {
      if (ms > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.run().finally(() => {
        this.running = undefined;
        // What an apply left (more than APPLY_MAX_CHUNKS came in) is due when its oldest record is, not a full
        // delay after this apply: otherwise a fleet above APPLY_MAX_CHUNKS per delay would only ever fall behind.
        const due = this.pending[0] && Math.max(0, this.pending[0].at + this.afterMs - performance.now());
        if (due !== undefined) this.schedule(this.waiters.length > 0 || this.full ? 0 : due);
      });
    }, ms);
  }

  private async run(): Promise<void> {
    let n = 0;
    let take = 0;
    while (take < this.pending.length && (take === 0 || n + this.pending[take]!.chunks <= RUN_MAX_CHUNKS))
      n += this.pending[take++]!.chunks;
    const batch = this.pending.slice(0, take);
    if (batch.length === 0) return;
    try {
      // The records taken are in sealed segments, which go once applied (storage/journal-files.ts).
      await this.files.seal();
      // One after another, so a stream split over two applies keeps its order. A failure leaves every record
      // pending: the applies before it are done again then, which skips the numbers they stored.
      const streams = await merged(batch);
      this.paced(batch, n, streams.length);
      for (const part of applies(streams)) await this.apply(part);
    } catch (err) {
      // Once per episode at warn (a full disk fails every try), each further try at debug.
      if (this.failedTries++ === 0)
        this.log.warn({ err, chunks: n }, "applying acknowledged chunks failed; they stay in the ingest journal");
      else this.log.debug({ err, chunks: n, tries: this.failedTries }, "applying acknowledged chunks failed again");
      await new Promise((r) => setTimeout(r, RETRY_MS));
      return;
    }
    if (this.failedTries > 0)
      this.log.info({ tries: this.failedTries }, "acknowledged chunks from the ingest journal applied again");
    this.failedTries = 0;
    const last = batch[batch.length - 1]!;
    this.pending.splice(0, take);
    for (const p of batch) this.pendingBytes -= p.body.length;
    this.appliedId = last.id;
    for (let i = this.waiters.length - 1; i >= 0; i--)
      if (this.waiters[i]!.id <= last.id) this.waiters.splice(i, 1)[0]!.resolve();
    // Applied is committed to cloud.db; the journal's copy may go (a crash before this applies it again: skipped).
    await this.files
      .trim(last.id)
      .catch((err: unknown) =>
        this.log.warn({ err }, "trimming the ingest journal failed; its applied records are skipped at the next start"),
      );
  }

  /**
   * The delay that lets a stream bring APPLY_STREAM_CHUNKS to an apply, from the chunks per stream per second of
   * the records just taken: n records from the first's time to the last's span n - 1 of their intervals.
   */
  private paced(batch: readonly Pending[], chunks: number, streams: number): void {
    const spanMs = batch[batch.length - 1]!.at - batch[0]!.at;
    if (spanMs <= 0 || streams === 0) return; // one record, or records of one instant: no pace to read
    const perStreamMs = (spanMs * batch.length) / (batch.length - 1) / (chunks / streams);
    this.afterMs = Math.min(APPLY_MAX_AFTER_MS, Math.max(APPLY_AFTER_MS, perStreamMs * APPLY_STREAM_CHUNKS));
  }

  /** Applies what is pending (for a while at most), then closes the journal's file. */
  async close(): Promise<void> {
    // Bounded: what a failing apply (a full disk) leaves stays in the journal and is applied at the next start.
    await this.applied(10_000);
    await this.running;
    this.closed = true;
    clearTimeout(this.timer);
    await this.files.close();
  }
}

/** Chunks decoded in one turn of the event loop at most (a run's records are read in several; acks wait behind). */
const DECODE_TURN_CHUNKS = APPLY_MAX_CHUNKS;

/** The records' streams, each stream's chunks together in the order they were received. */
async function merged(batch: readonly Pending[]): Promise<StreamChunks[]> {
  const byKey = new Map<string, StreamChunks & { chunks: StreamChunks["chunks"][number][] }>();
  let turn = 0;
  for (const p of batch) {
    if (turn >= DECODE_TURN_CHUNKS) {
      await new Promise<void>((r) => setImmediate(r));
      turn = 0;
    }
    turn += p.chunks;
    for (const s of journalChunks(p.body)) {
      const key = `${s.up.sessionId} ${s.up.streamId}`.toLowerCase();
      const same = byKey.get(key);
      if (same === undefined) byKey.set(key, { up: s.up, chunks: [...s.chunks] });
      else same.chunks.push(...s.chunks);
    }
  }
  return [...byKey.values()];
}

/** The streams in transactions of at most APPLY_MAX_CHUNKS chunks: whole streams, a larger one in slices. */
function applies(streams: readonly StreamChunks[]): StreamChunks[][] {
  const out: StreamChunks[][] = [];
  let part: StreamChunks[] = [];
  let n = 0;
  const add = (s: StreamChunks) => {
    if (n > 0 && n + s.chunks.length > APPLY_MAX_CHUNKS) {
      out.push(part);
      part = [];
      n = 0;
    }
    part.push(s);
    n += s.chunks.length;
  };
  for (const s of streams) {
    if (s.chunks.length <= APPLY_MAX_CHUNKS) add(s);
    else
      for (let i = 0; i < s.chunks.length; i += APPLY_MAX_CHUNKS)
        add({ up: s.up, chunks: s.chunks.slice(i, i + APPLY_MAX_CHUNKS) });
  }
  if (n > 0) out.push(part);
  return out;
}
