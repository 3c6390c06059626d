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
import type { BaseTimeService } from "../service/basetimes.js";
import type { MeasurementStore } from "../service/measurement-store.js";
import { nowIso } from "../formats/time.js";
import type { CommitTrace } from "./commit-trace.js";
import { commitStreams, type SharedCommit, type StreamChunks } from "./shared-commit.js";
import { journalHoldsRecords, JournalInUse } from "../storage/journal-files.js";
import { IngestJournal } from "./ingest-journal.js";
import type { Durability } from "../../database/db.js";
import { LogCompaction, POSTGRES_PACE, SQLITE_PACE } from "./log-compaction.js";
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
import { commitLane, type Lane, POSTGRES_LANES } from "./commit-lanes.js";

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
 * The journal is for many small chunks: a batch of more bytes than this, or with a chunk of more than
 * JOURNAL_CHUNK_MAX_BYTES (whose payloads go to payload files, written once), is committed to cloud.db directly.
 */
export const JOURNAL_BATCH_MAX_BYTES = 4 * 1024 * 1024;
export const JOURNAL_CHUNK_MAX_BYTES = 16 * 1024;
/** Sessions remembered as stored in cloud.db (the journal takes only theirs), at most. */
const MAX_SESSIONS = 16_384;

export class UpstreamStore {
  /** Measurements spread by session id (one lane on SQLite). */
  private readonly lanes: Lane[];
  /** Commits and compactions running. */
  private running = 0;
  /** Base-time and close writes under way, so drain() can wait for them too. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Sequence rows and data ids known to exist: a steady stream's commit skips their statements. */
  private readonly known = new KnownRows();
  private readonly compaction: LogCompaction;
  private compacting = false;
  /** The ingest journal, when the setting turns it on (SQLite only). */
  private journal: IngestJournal | undefined;
  /** Sessions whose measurement a commit to cloud.db made or found (the journal takes only their chunks). */
  private readonly sessions = new Set<string>();
  /** Streams (the broker's object for each, the same for all its chunks) whose session id was checked. */
  private readonly uuidSessions = new WeakSet<UpstreamRef>();

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
  ) {
    const pg = store.db.dialect === "postgres";
    this.lanes = Array.from({ length: pg ? POSTGRES_LANES : 1 }, () => ({ waiting: [], flushing: false }));
    this.compaction = new LogCompaction(store.db, pg ? POSTGRES_PACE : SQLITE_PACE, () => this.schedule());
  }

  /**
   * Applies what a crash left in the ingest journal (ingest-journal.ts) and, when `on` and on SQLite, keeps the
   * journal for the chunks to come. Called before the peer serves. A journal that holds chunks is applied whatever
   * the setting: they were acknowledged, so a peer started with the journal off (or on PostgreSQL) must store them.
   */
  async openJournal(dir: string, durability: Durability, on: boolean): Promise<void> {
    const keep = on && this.store.db.dialect === "sqlite";
    if (!keep && !(await journalHoldsRecords(dir))) return;
    let journal: IngestJournal;
    try {
      journal = await IngestJournal.open(dir, durability, (streams) => this.applyJournaled(streams), this.store.log);
    } catch (e) {
      if (!(e instanceof JournalInUse)) throw e;
      // Another peer serves this data directory and applies what its journal holds; this one commits directly.
      if (keep) this.store.log.warn(`${e.message}: this peer stores every commit in cloud.db before its ack`);
      return;
    }
    await journal.recover();
    if (keep) this.journal = journal;
    else await journal.close();
  }

  /** Resolves once every chunk acknowledged so far is in cloud.db (at most a few seconds; see IngestJournal). */
  settled(): Promise<void> {
    return this.journal?.applied() ?? Promise.resolve();
  }

  private laneOf(sessionId: string): Lane {
    return this.lanes[commitLane(sessionId, this.lanes.length)]!;
  }

  /** Resolves once the chunk is committed: "ok", or "skipped" for a sequence number already stored. */
  storeChunk(up: UpstreamRef, chunk: UpstreamChunkIn): Promise<ChunkResult | "not_persisted"> {
    if (!up.persist) return Promise.resolve("not_persisted");
    if (!this.uuidSessions.has(up)) {
      if (!isUuid(up.sessionId))
        return Promise.reject(new SessionRefused("a persisted upstream needs a UUID session id"));
      this.uuidSessions.add(up);
    }
    const lane = this.laneOf(up.sessionId);
    let b = lane.waiting[lane.waiting.length - 1];
    if (b === undefined || b.count >= MAX_BATCH_CHUNKS || b.bytes >= MAX_BATCH_BYTES) {
      b = new Batch();
      lane.waiting.push(b);
    }
    const bytes = bytesOf(chunk);
    b.bytes += bytes;
    if (bytes > b.largest) b.largest = bytes;
    const i = b.add(up, chunkOf(chunk));
    // Only a frame read as raw groups can be reused (received-frames.ts); any group's bytes name it.
    const raw = chunk.dataPointGroups[0]?.raw?.raw;
    if (raw !== undefined) b.releases.push(holdFrame(raw));
    if (!lane.flushing) this.schedule();
    return b.answer(i);
  }

  /**
   * Starts what is due: a compaction first, then each idle lane's next commit (in the next turn, so that the
   * chunks of this one join it). On PostgreSQL the lanes and the compaction run side by side (the advisory locks
   * keep apart what touches one measurement); SQLite's one writer runs one of them at a time.
   */
  private schedule(): void {
    // With the journal, a commit writes the journal's file, not cloud.db: it need not wait for a compaction.
    const parallel = this.lanes.length > 1 || this.journal !== undefined;
    if (this.compaction.due && !this.compacting && (parallel || this.running === 0)) {
      this.compacting = true;
      this.running++;
      setImmediate(() => void this.compaction.run().finally(() => this.ended(() => (this.compacting = false))));
      if (!parallel) return;
    }
    for (const lane of this.lanes) {
      if (lane.flushing || lane.waiting.length === 0 || (!parallel && this.running > 0)) continue;
      lane.flushing = true;
      this.running++;
      setImmediate(() => void this.flush(lane).finally(() => this.ended(() => (lane.flushing = false))));
    }
  }

  private ended(free: () => void): void {
    free();
    this.running--;
    this.schedule();
  }

  private async flush(lane: Lane): Promise<void> {
    const b = lane.waiting.shift()!;
    // The chunks of each stream, in arrival order.
    const streams = streamsOf(b);
    if (this.journal !== undefined) {
      if (this.journaled(streams, b)) return this.record(b, streams);
      // Made or checked in cloud.db now: what the journal holds goes first, so a stream's chunks apply in order.
      await this.journal.applied();
    }
    const lease = leasePayloads();
    try {
      const commit = await this.commit(
        streams.map((e) => e.s),
        lease.alloc,
      );
      streams.forEach((e, k) => {
        const r = commit.results[k]!;
        e.at.forEach((i, j) => (b.results[i] = r instanceof Error ? r : r[j]!));
      });
      b.settle();
    } catch (err) {
      b.settle(err);
    } finally {
      lease.release(); // every write that reads them has settled
      for (const release of b.releases) release();
    }
  }

  /** Commits streams' chunks to cloud.db in one transaction; the journal's apply (`applied`) writes packs at once. */
  private async commit(streams: StreamChunks[], alloc?: (n: number) => Buffer, applied = false): Promise<SharedCommit> {
    let keys: string[] = [];
    const locks = [...new Set(streams.flatMap((s) => measurementLock(s.up.sessionId).locks ?? []))];
    const started = performance.now();
    try {
      const commit = await this.store.db.transaction(
        async (tx) => {
          const c = await commitStreams(tx, this.store.files, streams, nowIso(), this.known, alloc, applied);
          keys = c.keys;
          return c;
        },
        // Its reads may run beside its BEGIN (SQLite): no other process writes measurements or chunks.
        { locks, earlyReads: true },
      );
      commit.learn();
      if (this.journal !== undefined) this.learnSessions(keys);
      this.compaction.appended(commit.logged, commit.touched.keys());
      const seconds = (performance.now() - started) / 1000;
      if (!applied && commit.points > 0) this.trace?.committed(commit.points);
      if (commit.stored > 0) this.store.commits?.committed(commit.stored, commit.points, seconds);
      for (const [meas, project] of commit.touched)
        this.store.events.publishData(meas, project, commit.changed.get(meas));
      return commit;
    } catch (err) {
      for (const k of keys) this.known.forget(k);
      throw err;
    }
  }

  /** The sessions a commit to cloud.db made or found (measurement row keys: `<uuid> <created_at>`). */
  private learnSessions(keys: readonly string[]): void {
    // Bounded as the known rows are: a session forgotten goes directly to cloud.db once more, and is known again.
    if (this.sessions.size > MAX_SESSIONS) this.sessions.clear();
    for (const k of keys) this.sessions.add(k.slice(0, k.indexOf(" ")));
  }

  /**
   * Whether a batch goes to the journal: every session's measurement was committed to cloud.db before (owner
   * checked, nothing to make), its chunks are small, and the journal is not full.
   */
  private journaled(streams: ReadonlyArray<{ s: StreamChunks }>, b: Batch): boolean {
    if (this.journal!.full || b.bytes > JOURNAL_BATCH_MAX_BYTES || b.largest > JOURNAL_CHUNK_MAX_BYTES) return false;
    for (const e of streams) if (!this.sessions.has(e.s.up.sessionId.toLowerCase())) return false;
    return true;
  }

  private async record(b: Batch, streams: ReadonlyArray<{ s: StreamChunks; at: number[] }>): Promise<void> {
    try {
      const points = await this.journal!.record(streams.map((e) => e.s));
      // Durable now, and acknowledged: that is what the trace times (not the apply a moment later).
      this.trace?.committed(points);
      for (let i = 0; i < b.count; i++) b.results[i] = "ok";
      b.settle();
    } catch (err) {
      b.settle(err);
    } finally {
      for (const release of b.releases) release(); // the journal reads its record, not the frames
    }
  }

  /** The journal's apply: chunks acknowledged before, committed to cloud.db; a refused stream is logged. */
  private async applyJournaled(streams: StreamChunks[]): Promise<void> {
    const commit = await this.commit(streams, undefined, true);
    commit.results.forEach((r, k) => {
      if (r instanceof Error)
        this.store.log.warn(
          { err: r, session: streams[k]!.up.sessionId, chunks: streams[k]!.chunks.length },
          "acknowledged chunks refused when applied from the ingest journal",
        );
    });
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
    return this.settled().then(() =>
      storedChunkNumbers(this.store.db, up.sessionId.toLowerCase(), up.streamId.toLowerCase(), limit),
    );
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
    await this.settled(); // after the chunks acknowledged before it
    let uuid = "";
    const state = await this.store.db.transaction(async (tx) => {
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
      return this.store.stateIn(tx, uuid);
    }, measurementLock(bt.sessionId));
    this.store.events.publish(uuid, info.projectUuid, state);
  }

  /** A closed upstream tells its sequence what to expect; close_session also ends the measurement. */
  closeUpstream(up: UpstreamRef, close: UpstreamCloseIn): Promise<void> {
    return this.track(this.writeClose(up, close));
  }

  private async writeClose(up: UpstreamRef, close: UpstreamCloseIn): Promise<void> {
    if (!up.persist || !isUuid(up.sessionId)) return;
    const uuid = up.sessionId.toLowerCase();
    await this.settled(); // its counts and status follow the chunks acknowledged before it
    const state = await this.store.db.transaction(async (tx) => {
      const m = await repo.findMeasurement(tx, uuid);
      if (!m || m.project_uuid !== up.projectUuid) return undefined;
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
      return this.store.stateIn(tx, uuid);
    }, measurementLock(uuid));
    if (state) this.store.events.publish(uuid, up.projectUuid, state);
  }

  /** Resolves when every queued chunk, base time and close has been written (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.running > 0 || this.lanes.some((l) => l.waiting.length > 0) || this.inFlight.size) {
      await Promise.allSettled([...this.inFlight]);
      await new Promise((r) => setTimeout(r, 5));
    }
    await this.journal?.applied(10_000);
    await this.compaction.finish();
  }

  /** Drains, then closes the journal (what a failing apply left in it is applied at the next start). */
  async close(): Promise<void> {
    await this.drain();
    await this.journal?.close();
  }
}
