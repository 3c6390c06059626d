// The broker's storage side (`persist=true` upstreams): a measurement per session id (created on
// first use, owned by the sending edge), a sequence per upstream stream, a chunk row per sequence
// number. Chunks are group-committed: whatever arrives while a transaction runs, from every stream, goes
// into the next one (shared-commit.ts), and every chunk of it is answered once it committed.
import { isUuid } from "../formats/codec.js";
import type { RawPointGroup } from "../../../proto/wire/chunk-scan.js";
import { holdFrame } from "../../../proto/transport/received-frames.js";
import type { ChunkResult } from "../storage/chunk-write.js";
import { KnownRows } from "./known-rows.js";
import { measurementLock } from "../service/model.js";
import * as repo from "../repo/measurements.js";
import { ensureSequence, setExpectations, storedChunkNumbers } from "../repo/sequences.js";
import { compactLog, logMeasurements } from "../repo/chunk-log.js";
import type { BaseTimeService } from "../service/basetimes.js";
import type { MeasurementStore } from "../service/measurement-store.js";
import { nowIso } from "../formats/time.js";
import type { CommitTrace } from "./commit-trace.js";
import { commitStreams } from "./shared-commit.js";
import {
  Batch,
  bytesOf,
  chunkOf,
  leasePayloads,
  MAX_BATCH_BYTES,
  MAX_BATCH_CHUNKS,
  streamsOf,
} from "./commit-batch.js";
import { checkOwner, ensureSessionMeasurement, SessionRefused } from "./session-measurement.js";

export { NodeMismatch, NodeNotUuid, SessionRefused } from "./session-measurement.js";

/** Structurally the broker's UpstreamInfo / MetadataInfo (cloud/iscp/broker/options.ts). */
export interface UpstreamRef {
  streamId: string;
  sessionId: string;
  projectUuid: string;
  nodeId: string;
  persist: boolean;
}
export interface UpstreamChunkIn {
  sequenceNumber: number;
  dataPointGroups: Array<{
    dataId: { name: string; type: string };
    readonly dataPoints: Array<{ elapsedTime: bigint; payload: Uint8Array }>;
    raw?: RawPointGroup;
  }>;
}
export interface BaseTimeIn {
  sessionId: string;
  name: string;
  priority: number;
  elapsedTime: bigint;
  baseTime: bigint;
}
export interface UpstreamCloseIn {
  totalDataPoints: bigint;
  finalSequenceNumber: number;
  closeSession: boolean;
  /** false when the stream expired without a close request: its totals are then the broker's own counts. */
  normal?: boolean;
}

/**
 * The chunk log (repo/chunk-log.ts) is compacted a slice of the sequences at a time (sequence id modulo
 * COMPACT_SLICES), one slice every COMPACT_MS while it holds rows: each stream's chunks of
 * COMPACT_SLICES × COMPACT_MS then reach meas_chunks' index pages in one write, the log stays small (its unique
 * index is written by every commit; readers read it beside the tables), and the commits that wait behind a
 * compaction wait for a slice of it. Beyond COMPACT_ROWS rows the whole log is compacted at once.
 */
const COMPACT_SLICES = 4;
const COMPACT_MS = 125;
const COMPACT_ROWS = 40_000;

export class UpstreamStore {
  /** Batches waiting for their commit, oldest first; the last one takes new chunks until it is full. */
  private readonly waiting: Batch[] = [];
  private flushing = false;
  /** Base-time and close writes under way, so drain() can wait for them too. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Sequence rows and data ids known to exist: a steady stream's commit skips their statements. */
  private readonly known = new KnownRows();
  /** Rows appended to the chunk log since it was last empty (-1: unknown, a previous run may have left some). */
  private logged = -1;
  private compactTimer: NodeJS.Timeout | undefined;
  /** The slice of the sequences the next compaction moves. */
  private slice = 0;

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const done = () => this.inFlight.delete(p);
    p.then(done, done);
    return p;
  }

  constructor(
    private readonly store: MeasurementStore,
    private readonly baseTimes: BaseTimeService,
    private readonly trace?: CommitTrace,
  ) {}

  /** Resolves once the chunk is committed: "ok", or "skipped" for a sequence number already stored. */
  storeChunk(up: UpstreamRef, chunk: UpstreamChunkIn): Promise<ChunkResult | "not_persisted"> {
    if (!up.persist) return Promise.resolve("not_persisted");
    if (!isUuid(up.sessionId))
      return Promise.reject(new SessionRefused("a persisted upstream needs a UUID session id"));
    let b = this.waiting[this.waiting.length - 1];
    if (b === undefined || b.count >= MAX_BATCH_CHUNKS || b.bytes >= MAX_BATCH_BYTES) {
      b = new Batch();
      this.waiting.push(b);
    }
    b.bytes += bytesOf(chunk);
    const i = b.add(up, chunkOf(chunk));
    // Only a frame read as raw groups can be reused (received-frames.ts); any group's bytes name it.
    const raw = chunk.dataPointGroups[0]?.raw?.raw;
    if (raw !== undefined) b.releases.push(holdFrame(raw));
    this.schedule();
    return b.answer(i);
  }

  private schedule(): void {
    if (this.flushing || (this.waiting.length === 0 && !this.compactDue)) return;
    this.flushing = true;
    setImmediate(() => void (this.compactDue || this.waiting.length === 0 ? this.compact() : this.flush()));
  }

  private compactDue = false;

  /** Counts appended log rows; a compaction is due COMPACT_MS after the last one while the log holds rows. */
  private appendedToLog(rows: number): void {
    if (this.logged < 0) this.compactDue = true;
    this.logged = Math.max(0, this.logged) + rows;
    if (this.logged >= COMPACT_ROWS) this.compactDue = true;
    else if (this.logged > 0) this.armCompaction();
  }

  /** A compaction COMPACT_MS from now (unless one is armed). */
  private armCompaction(): void {
    if (this.compactTimer !== undefined) return;
    this.compactTimer = setTimeout(() => {
      this.compactTimer = undefined;
      this.compactDue = true;
      this.schedule();
    }, COMPACT_MS);
    this.compactTimer.unref();
  }

  /** Moves the chunk log into the chunk tables; on failure the rows stay (readers read them) and it is tried again. */
  private async compact(): Promise<void> {
    this.compactDue = false;
    clearTimeout(this.compactTimer);
    this.compactTimer = undefined;
    try {
      if (this.logged < 0 || this.logged >= COMPACT_ROWS) {
        await this.store.db.transaction((tx) => compactLog(tx));
        this.logged = 0;
      } else {
        // Only the measurements it moves are locked (on PostgreSQL the commits of others go on meanwhile).
        const measurements = await logMeasurements(this.store.db, this.slice, COMPACT_SLICES);
        const part = { slice: this.slice, of: COMPACT_SLICES, measurements };
        const locks = measurements.flatMap((m) => measurementLock(m).locks);
        const moved =
          measurements.length === 0 ? 0 : await this.store.db.transaction((tx) => compactLog(tx, part), { locks });
        this.slice = (this.slice + 1) % COMPACT_SLICES;
        this.logged = Math.max(0, this.logged - moved);
        // Rows of other slices are left: the next slice is due in COMPACT_MS.
        if (this.logged > 0) this.armCompaction();
      }
    } catch {
      // Tried again later, never at once: a full disk would otherwise make this a busy loop.
      this.logged = Math.max(1, this.logged);
      this.armCompaction();
    } finally {
      this.flushing = false;
      this.schedule();
    }
  }

  private async flush(): Promise<void> {
    const b = this.waiting.shift()!;
    const lease = leasePayloads();
    let keys: string[] = [];
    try {
      // The chunks of each stream, in arrival order.
      const streams = streamsOf(b);
      const locks = [...new Set(streams.flatMap((e) => measurementLock(e.s.up.sessionId).locks ?? []))];
      const started = performance.now();
      const commit = await this.store.db.transaction(
        async (tx) => {
          const c = await commitStreams(
            tx,
            this.store.files,
            streams.map((e) => e.s),
            nowIso(),
            this.known,
            lease.alloc,
          );
          keys = c.keys;
          return c;
        },
        { locks },
      );
      commit.learn();
      this.appendedToLog(commit.stored);
      const seconds = (performance.now() - started) / 1000;
      streams.forEach((e, k) => {
        const r = commit.results[k]!;
        e.at.forEach((i, j) => (b.results[i] = r instanceof Error ? r : r[j]!));
      });
      if (commit.points > 0) this.trace?.committed(commit.points);
      if (commit.stored > 0) this.store.commits?.committed(commit.stored, commit.points, seconds);
      for (const [meas, project] of commit.touched) this.store.events.publishThrottled(meas, project);
      b.settle();
    } catch (err) {
      for (const k of keys) this.known.forget(k);
      b.settle(err);
    } finally {
      lease.release(); // every write that reads them has settled
      for (const release of b.releases) release();
      this.flushing = false;
      this.schedule();
    }
  }

  /** Refuses (throws) an upstream open whose session names a measurement it may not write; a new session passes. */
  async checkSession(up: { sessionId: string; projectUuid: string; nodeId: string }): Promise<void> {
    if (!isUuid(up.sessionId)) throw new SessionRefused("a persisted upstream needs a UUID session id");
    const m = await repo.findMeasurement(this.store.db, up.sessionId.toLowerCase());
    if (m) checkOwner(m, up);
  }

  /** Chunk numbers of this upstream already stored (the highest `limit`): a stream taken over by another peer. */
  storedSequenceNumbers(up: UpstreamRef, limit: number): Promise<number[]> {
    if (!up.persist || !isUuid(up.sessionId)) return Promise.resolve([]);
    return storedChunkNumbers(this.store.db, up.sessionId.toLowerCase(), up.streamId.toLowerCase(), limit);
  }

  /** A base time sent as upstream metadata (persist=true) lands on the session's measurement. */
  storeBaseTime(info: { projectUuid: string; nodeId: string; persist: boolean }, bt: BaseTimeIn): Promise<void> {
    return this.track(this.writeBaseTime(info, bt));
  }

  private async writeBaseTime(
    info: { projectUuid: string; nodeId: string; persist: boolean },
    bt: BaseTimeIn,
  ): Promise<void> {
    if (!info.persist) return;
    if (!isUuid(bt.sessionId)) throw new SessionRefused("a persisted base time needs a UUID session id");
    let uuid = "";
    await this.store.db.transaction(async (tx) => {
      const now = nowIso();
      uuid = await ensureSessionMeasurement(
        tx,
        { sessionId: bt.sessionId, projectUuid: info.projectUuid, nodeId: info.nodeId },
        now,
      );
      const elapsedNs = Number(bt.elapsedTime);
      await this.baseTimes.upsertByName(
        tx,
        uuid,
        { name: bt.name, priority: bt.priority, baseTimeNs: bt.baseTime, elapsedNs },
        now,
      );
      await repo.touchMeasurement(tx, uuid, now);
    }, measurementLock(bt.sessionId));
    this.store.events.publish(uuid, info.projectUuid);
  }

  /** A closed upstream tells its sequence what to expect; close_session also ends the measurement. */
  closeUpstream(up: UpstreamRef, close: UpstreamCloseIn): Promise<void> {
    return this.track(this.writeClose(up, close));
  }

  private async writeClose(up: UpstreamRef, close: UpstreamCloseIn): Promise<void> {
    if (!up.persist || !isUuid(up.sessionId)) return;
    const uuid = up.sessionId.toLowerCase();
    const found = await this.store.db.transaction(async (tx) => {
      const m = await repo.findMeasurement(tx, uuid);
      if (!m || m.project_uuid !== up.projectUuid) return false;
      const now = nowIso();
      const seq = await ensureSequence(tx, uuid, up.streamId.toLowerCase(), now);
      if (close.normal !== false)
        await setExpectations(
          tx,
          seq.id,
          { expected_data_points: Number(close.totalDataPoints), final_sequence_number: close.finalSequenceNumber },
          now,
        );
      if (close.closeSession) await repo.patchMeasurement(tx, uuid, { ended: true }, now);
      await repo.refreshStatus(tx, uuid, now);
      return true;
    }, measurementLock(uuid));
    if (found) this.store.events.publish(uuid, up.projectUuid);
  }

  /** Resolves when every queued chunk, base time and close has been written (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.flushing || this.waiting.length || this.inFlight.size) {
      await Promise.allSettled([...this.inFlight]);
      await new Promise((r) => setTimeout(r, 5));
    }
    clearTimeout(this.compactTimer);
    this.compactTimer = undefined;
    if (this.logged !== 0) await this.store.db.transaction((tx) => compactLog(tx)).then(() => (this.logged = 0));
  }
}
