// The agent's durable queue: one LMDB environment holding measurements, sequences (one per upstream
// stream or deferred destination within a measurement) and chunks (many points per LMDB value).
// Writes are never synchronous: puts issued in one event turn share one write transaction (lmdb-js
// batching), and append() resolves when that transaction is flushed to disk: the durability point.
//
// Databases:  meas   uuid            -> MeasurementRecord
//             seqs   ord             -> SequenceRecord
//             chunks gid             -> 16-byte header (u32 seqOrd, u32 chunkNo, f64 createdAt ms) + chunk
//             index  [seqOrd, chunkNo] -> [gid, size]
// gid grows with every chunk, so `chunks` in key order is oldest first: eviction walks it from the start.
import { mkdir } from "node:fs/promises";
import type { DataPoint } from "../datapoint.js";
import { chunkBuffers, encodeChunk } from "./chunk-codec.js";
import { ChunkLedger, type MeasState, type QueueStats, type SeqState } from "./chunk-ledger.js";
import { DISK_FULL_RATIO, diskUsage } from "./disk.js";
import { QueueEnv, queueMapBytes } from "./queue-env.js";
import { KEEP_FINISHED, finishedBeyond } from "./retention.js";
import { CHUNK_HEADER, readChunks, type ChunkSources, type StoredChunk } from "./read-chunks.js";
import { UncommittedChunks } from "./uncommitted.js";
import { type MeasurementInfo, type MeasurementRecord, type SequenceRecord, newCounters } from "./records.js";

export type { QueueStats } from "./chunk-ledger.js";
export { CHUNK_HEADER, type StoredChunk } from "./read-chunks.js";
const MiB = 1024 * 1024;

export interface QueueOptions {
  /** Directory of the LMDB files (created if missing). */
  dir: string;
  /** `deferred_upload.data_storage_capacity`, MiB. */
  capacityMiB: number;
  /** `deferred_upload.limit_data_storage`: evict oldest chunks above capacity (else never evict). */
  limitDataStorage: boolean;
  /** Called after chunks were evicted (count and bytes of this eviction). */
  onEvict?: (chunks: number, bytes: number) => void;
  /** Finished measurements kept listed (default KEEP_FINISHED); older ones are forgotten (retention.ts). */
  keepFinished?: number;
}

export class DurableQueue {
  private readonly env: QueueEnv;
  private readonly measurements = new Map<string, MeasState>();
  private readonly sequences = new Map<number, SeqState>();
  private readonly uncommitted = new UncommittedChunks();
  private readonly ledger: ChunkLedger;
  private readonly sources: ChunkSources;
  private nextGid = 1;
  private nextSeqOrd = 1;
  private nextMeasOrd = 1;
  private capacityBytes: number;
  private limit: boolean;

  private constructor(private readonly opts: QueueOptions) {
    this.env = new QueueEnv(opts.dir, queueMapBytes(opts.capacityMiB));
    this.ledger = new ChunkLedger(this.env, this.uncommitted, this.measurements, this.sequences);
    this.sources = { env: this.env, uncommitted: this.uncommitted, removing: this.ledger.removing };
    this.capacityBytes = opts.capacityMiB * MiB;
    this.limit = opts.limitDataStorage;
  }

  /** Opens (or creates) the queue and rebuilds counters; sequences left open by a previous run are closed. */
  static async open(opts: QueueOptions): Promise<DurableQueue> {
    await mkdir(opts.dir, { recursive: true, mode: 0o700 });
    const q = new DurableQueue(opts);
    await q.load();
    return q;
  }

  private async load(): Promise<void> {
    for (const { value } of this.env.meas.getRange()) {
      this.measurements.set(value.uuid, { rec: value, c: newCounters() });
      this.nextMeasOrd = Math.max(this.nextMeasOrd, value.ord + 1);
    }
    const leftOpen: number[] = [];
    for (const { key, value } of this.env.seqs.getRange()) {
      if (!value.closed) leftOpen.push(key);
      this.sequences.set(key, { rec: value, c: newCounters() });
      this.nextSeqOrd = Math.max(this.nextSeqOrd, key + 1);
    }
    for (const { key, value } of this.env.index.getRange()) {
      const s = this.sequences.get(key[0]);
      if (s === undefined) continue;
      this.ledger.count(s, 1, value[1]);
      this.nextGid = Math.max(this.nextGid, value[0] + 1);
    }
    // The previous run's real-time senders are gone: close their sequences as closeSequence() would,
    // and its measurement is over (a new run starts a new one). The cloud never heard it end: the
    // deferred upload tells it (sequence totals, complete) even when nothing is left to upload.
    for (const ord of leftOpen) void this.closeSequence(ord);
    for (const { rec } of this.measurements.values()) {
      if (rec.ended) continue;
      rec.owesCompletion = true;
      void this.endMeasurement(rec.uuid);
    }
    this.pruneFinished();
    for (const k of this.env.chunks.getKeys({ limit: 1 })) this.ledger.oldestGid = k;
    const last = this.env.chunks.getKeys({ reverse: true, limit: 1 });
    for (const k of last) this.nextGid = Math.max(this.nextGid, k + 1);
    await this.env.root.committed;
  }

  /** Flushes and closes; what reaches the queue after this is dropped (see QueueEnv). */
  close(): Promise<void> {
    return this.env.close();
  }

  get stats(): QueueStats {
    return { ...this.ledger.stats };
  }

  /** When the oldest data the cloud has not acknowledged (nor the deferred upload uploaded) was stored. */
  oldestChunkTime = (): number | undefined => this.env.oldestChunkTime(this.ledger.removing);
  setCapacity(capacityMiB: number, limitDataStorage: boolean): void {
    this.capacityBytes = capacityMiB * MiB;
    this.limit = limitDataStorage;
    this.evict();
  }

  // --- measurements ---

  /** Registers a measurement (idempotent for the same uuid). baseTimeNs: epoch nanoseconds. */
  startMeasurement(uuid: string, baseTimeNs: bigint): MeasurementRecord {
    const found = this.measurements.get(uuid);
    if (found !== undefined) return found.rec;
    const rec: MeasurementRecord = {
      uuid,
      ord: this.nextMeasOrd++,
      baseTimeNs: baseTimeNs.toString(),
      createdAt: Date.now(),
      ended: false,
    };
    this.measurements.set(uuid, { rec, c: newCounters() });
    void this.env.put(this.env.meas, uuid, rec);
    return rec;
  }

  async endMeasurement(uuid: string): Promise<void> {
    const m = this.measurements.get(uuid);
    if (m === undefined || m.rec.ended) return;
    m.rec.ended = true;
    const put = this.env.put(this.env.meas, uuid, m.rec);
    this.pruneFinished();
    await put;
  }

  /** Deferred upload stored chunks of the measurement: the cloud must be told it is complete (persisted). */
  async markOwesCompletion(uuid: string, owes: boolean): Promise<void> {
    const m = this.measurements.get(uuid);
    if (m === undefined || (m.rec.owesCompletion ?? false) === owes) return;
    m.rec.owesCompletion = owes;
    const put = this.env.put(this.env.meas, uuid, m.rec);
    if (!owes) this.pruneFinished();
    await put;
  }

  /**
   * Ended measurements whose completion the cloud still waits for and that have nothing left to upload
   * (no stored chunks, no real-time sequence still open), in the order they were taken.
   */
  completionsDue(): MeasurementInfo[] {
    return this.listMeasurements().filter(
      (m) =>
        m.ended &&
        m.owesCompletion === true &&
        m.chunkCount === 0 &&
        !this.sequencesOf(m.uuid).some((s) => !s.closed && s.realtime),
    );
  }

  /** Measurements in the order they were taken, with their pending data. */
  listMeasurements(): MeasurementInfo[] {
    return [...this.measurements.values()]
      .sort((a, b) => a.rec.ord - b.rec.ord)
      .map(({ rec, c }) => ({ ...rec, chunkCount: c.chunks, pendingDataSize: c.bytes }));
  }

  getMeasurement(uuid: string): MeasurementInfo | undefined {
    const m = this.measurements.get(uuid);
    return m && { ...m.rec, chunkCount: m.c.chunks, pendingDataSize: m.c.bytes };
  }

  /** Deletes a measurement with all its sequences and pending chunks. Returns false when unknown. */
  async deleteMeasurement(uuid: string): Promise<boolean> {
    if (!this.measurements.has(uuid)) return false;
    await this.forget(uuid);
    await this.env.flushed;
    return true;
  }

  /** Removes a measurement's records, its sequences' and their pending chunks (one write transaction). */
  private forget(uuid: string): Promise<boolean> {
    for (const [ord, s] of this.sequences) {
      if (s.rec.measUuid !== uuid) continue;
      this.ledger.releaseAll(ord, s);
      this.sequences.delete(ord);
      void this.env.remove(this.env.seqs, ord);
    }
    this.measurements.delete(uuid);
    return this.env.remove(this.env.meas, uuid);
  }

  /** Forgets the oldest finished measurements beyond the newest `keepFinished` (retention.ts). */
  private pruneFinished(): void {
    if (this.env.closed) return;
    const keep = this.opts.keepFinished ?? KEEP_FINISHED;
    for (const uuid of finishedBeyond(this.measurements.values(), this.sequences.values(), keep))
      void this.forget(uuid);
  }

  // --- sequences ---

  /**
   * Opens a sequence of chunks for one destination of a measurement. `uuid` is the sequence UUID the
   * server will know it by (the iSCP upstream stream id when sent in real time). `realtime: false`
   * (the `deferred` destination) makes its chunks deferred-upload work at once, while it is still open.
   */
  openSequence(measUuid: string, destId: string, uuid: string, recover: boolean, realtime = true): SequenceRecord {
    if (!this.measurements.has(measUuid)) throw new Error(`unknown measurement ${measUuid}`);
    const rec: SequenceRecord = {
      ord: this.nextSeqOrd++,
      uuid,
      measUuid,
      destId,
      recover,
      realtime,
      lastChunkNo: 0,
      points: 0,
      closed: false,
    };
    this.sequences.set(rec.ord, { rec, c: newCounters() });
    void this.env.put(this.env.seqs, rec.ord, rec);
    return rec;
  }

  /**
   * The real-time sender is done with a sequence: what it did not get acked stays for deferred upload,
   * or is released and counted when the sequence has recover: false.
   */
  async closeSequence(ord: number): Promise<void> {
    const s = this.sequences.get(ord);
    if (s === undefined || s.rec.closed) return;
    s.rec.closed = true;
    if (!s.rec.recover) {
      this.ledger.stats.droppedChunks += s.c.chunks;
      this.ledger.releaseAll(ord, s);
    }
    const put = this.env.put(this.env.seqs, ord, s.rec);
    this.pruneFinished();
    await put;
  }

  /**
   * Gives an open sequence the UUID the server will know it by, before any of its chunks left the agent
   * (the first iSCP stream of a measurement adopts the chunks stored while it was being opened).
   */
  async renameSequence(ord: number, uuid: string): Promise<void> {
    const s = this.sequences.get(ord);
    if (s === undefined || s.rec.closed) throw new Error(`sequence ${ord} is not open`);
    s.rec.uuid = uuid;
    await this.env.put(this.env.seqs, ord, s.rec);
  }

  getSequence(ord: number): (SequenceRecord & { chunkCount: number; pendingDataSize: number }) | undefined {
    const s = this.sequences.get(ord);
    return s && { ...s.rec, chunkCount: s.c.chunks, pendingDataSize: s.c.bytes };
  }

  /**
   * Sequences whose stored chunks are the deferred upload's work (closed, or not real-time), oldest
   * measurement first.
   */
  pendingSequences(measUuid?: string): SequenceRecord[] {
    const ordOf = (u: string) => this.measurements.get(u)?.rec.ord ?? 0;
    return [...this.sequences.values()]
      .filter(
        (s) =>
          (s.rec.closed || s.rec.realtime === false) &&
          s.c.chunks > 0 &&
          (measUuid === undefined || s.rec.measUuid === measUuid),
      )
      .sort((a, b) => ordOf(a.rec.measUuid) - ordOf(b.rec.measUuid) || a.rec.ord - b.rec.ord)
      .map((s) => ({ ...s.rec }));
  }

  /** Sequences of a measurement (open or closed), to report expected points and final chunk numbers. */
  sequencesOf(measUuid: string): SequenceRecord[] {
    return [...this.sequences.values()].filter((s) => s.rec.measUuid === measUuid).map((s) => ({ ...s.rec }));
  }

  // --- chunks ---

  /**
   * Appends the points as one chunk of the sequence (numbered from 1). The returned promise resolves
   * when the chunk is durable; only then count the points as accepted.
   */
  append(seqOrd: number, points: readonly DataPoint[]): { chunkNo: number; durable: Promise<void> } {
    return this.appendEncoded(seqOrd, encodeChunk(points, CHUNK_HEADER), points.length);
  }

  /**
   * Appends a chunk already encoded (ChunkBuilder.finish(CHUNK_HEADER): the first CHUNK_HEADER bytes are
   * filled in here) holding `pointCount` points.
   */
  appendEncoded(seqOrd: number, value: Buffer, pointCount: number): { chunkNo: number; durable: Promise<void> } {
    if (this.env.closed) throw new Error("the queue is closed");
    const s = this.sequences.get(seqOrd);
    if (s === undefined || s.rec.closed) throw new Error(`sequence ${seqOrd} is not open`);
    const chunkNo = ++s.rec.lastChunkNo;
    s.rec.points += pointCount;
    const gid = this.nextGid++;
    value.writeUInt32LE(seqOrd, 0);
    value.writeUInt32LE(chunkNo, 4);
    value.writeDoubleLE(Date.now(), 8);
    void this.env.put(this.env.chunks, gid, value);
    void this.env.put(this.env.index, [seqOrd, chunkNo], [gid, value.length]);
    this.uncommitted.add(seqOrd, chunkNo, { gid, value });
    // Committed: LMDB holds the bytes, and readers get them from there (a copy, or a transient view).
    const committed = this.env.put(this.env.seqs, seqOrd, s.rec).finally(() => {
      this.uncommitted.committed(seqOrd, chunkNo);
      chunkBuffers.give(value);
      // Over capacity by chunks that were not committed at their append: evictable now, even if no append follows.
      if (!this.env.closed) this.evict();
    });
    this.ledger.count(s, 1, value.length);
    this.evict();
    return { chunkNo, durable: committed.then(() => this.env.flushed).then(() => undefined) };
  }

  /**
   * Up to `limit` chunks of a sequence after chunk number `after`, in order, committed or not (see uncommitted.ts).
   * `transient`: a chunk read from LMDB is not copied out and its data is valid until the next read (one chunk).
   */
  readChunks(seqOrd: number, after: number, limit: number, transient = false): StoredChunk[] {
    if (this.env.closed) return [];
    return readChunks(this.sources, seqOrd, after, limit, transient, this.sequences.get(seqOrd)?.rec.lastChunkNo);
  }

  /** Releases acknowledged (or uploaded) chunks. Unknown or already released chunks are ignored. */
  async ack(seqOrd: number, chunkNos: Iterable<number>): Promise<void> {
    const s = this.sequences.get(seqOrd);
    if (s === undefined || this.env.closed) return;
    let last: Promise<unknown> | undefined;
    for (const no of chunkNos) last = this.ledger.release(seqOrd, s, no) ?? last;
    // The last chunk of an ended measurement released: it may be finished now.
    if (last !== undefined && s.c.chunks === 0 && this.measurements.get(s.rec.measUuid)?.rec.ended)
      this.pruneFinished();
    if (last !== undefined) await last;
  }

  // --- capacity ---

  /** Fraction (0..1) of the file system holding the queue that is in use. */
  diskUsage(): Promise<number> {
    return diskUsage(this.opts.dir);
  }

  /** limit_data_storage false and the disk is 90 % full: the caller stops the measurement. */
  async diskFull(): Promise<boolean> {
    return !this.limit && (await this.diskUsage()) >= DISK_FULL_RATIO;
  }

  /** Oldest-first eviction down to capacity (only with limit_data_storage). */
  private evict(): void {
    if (!this.limit) return;
    const { chunks, bytes } = this.ledger.evict(this.capacityBytes);
    if (chunks > 0) this.opts.onEvict?.(chunks, bytes);
  }
}
