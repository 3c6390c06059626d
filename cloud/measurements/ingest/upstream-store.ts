// The broker's storage side (`persist=true` upstreams): a measurement per session id (created on
// first use, owned by the sending edge), a sequence per upstream stream, a chunk row per sequence
// number. Chunks are group-committed: whatever arrives while a transaction runs goes into the next.
import { BufferPool, POOLED_MIN } from "../../../proto/wire/buffer-pool.js";
import { allStatements, type Queryable } from "../../storage/db.js";
import { isUuid, type Chunk } from "../formats/codec.js";
import type { RawPointGroup } from "../../../proto/wire/chunk-scan.js";
import { holdFrame } from "../../../proto/transport/received-frames.js";
import { chunkScript, type ScriptGroup } from "../repo/chunk-script.js";
import { writeChunks, type ChunkResult } from "../storage/chunk-write.js";
import { KnownRows } from "./known-rows.js";
import type { RawChunk } from "../formats/raw-chunk.js";
import { DEFAULT_PRIORITY, measurementLock, splitNs, type MeasRow } from "../service/model.js";
import * as repo from "../repo/measurements.js";
import { ensureSequence, setExpectations, storedChunkNumbers } from "../repo/sequences.js";
import type { BaseTimeService } from "../service/basetimes.js";
import type { MeasurementStore } from "../service/measurement-store.js";
import { nowIso, nowNs } from "../formats/time.js";
import type { CommitTrace } from "./commit-trace.js";

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
  dataPointGroups: Array<{ dataId: { name: string; type: string }; readonly dataPoints: Array<{ elapsedTime: bigint; payload: Uint8Array }>; raw?: RawPointGroup }>;
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

/** The session cannot be stored (not a UUID, or a measurement of another project has that UUID). */
export class SessionRefused extends Error {}
/** The session's measurement belongs to another node (edge): iSCP NODE_ID_MISMATCH. */
export class NodeMismatch extends Error {}
/** A measurement would be created for a node id that is not a UUID (it becomes edge_uuid): iSCP NO_NODE_ID. */
export class NodeNotUuid extends Error {}

/** Whether a measurement row may take data from this upstream; throws the refusal otherwise. */
function checkOwner(m: { project_uuid: string; edge_uuid: string }, up: { projectUuid: string; nodeId: string }): void {
  if (m.project_uuid !== up.projectUuid) throw new SessionRefused("the session's measurement belongs to another project");
  if (m.edge_uuid !== up.nodeId.toLowerCase()) throw new NodeMismatch("the session's measurement belongs to another node");
}

interface Pending {
  up: UpstreamRef;
  chunk: Chunk | RawChunk;
  /** Lets go of the received frame the chunk's views read (received-frames.ts), once its batch settled. */
  release(): void;
  resolve(r: ChunkResult): void;
  reject(e: unknown): void;
}

const MAX_BATCH = 512;

/** Buffers for received chunks' stored payloads, reused batch after batch (buffer-pool.ts). */
const payloadBuffers = new BufferPool();

/** A batch's payload buffers: taken while it is prepared, all given back once its writes settled. */
function leasePayloads(): { alloc: (n: number) => Buffer; release: () => void } {
  const taken: Buffer[] = [];
  return {
    alloc: (n) => {
      const b = payloadBuffers.take(n);
      if (n >= POOLED_MIN) taken.push(b);
      return b;
    },
    release: () => {
      for (const b of taken) payloadBuffers.give(b);
    },
  };
}

const pointsOf = (c: Chunk | RawChunk) =>
  "rawGroups" in c ? c.rawGroups.reduce((n, g) => n + g.points.count, 0) : c.groups.reduce((n, g) => n + g.points.length, 0);

/** Each chunk's answer, and the measurements that took chunks (uuid -> project uuid). */
interface Stored {
  results: Map<Pending, ChunkResult | Error>;
  touched: Map<string, string>;
}

export class UpstreamStore {
  private queue: Pending[] = [];
  private flushing = false;
  /** Base-time and close writes under way, so drain() can wait for them too. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Sequence rows and data ids known to exist: a steady stream's transaction skips their statements. */
  private readonly known = new KnownRows();

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
    if (!isUuid(up.sessionId)) return Promise.reject(new SessionRefused("a persisted upstream needs a UUID session id"));
    // Received bytes are stored as they are when every group has them (iSCP enc=proto).
    const c: Chunk | RawChunk = chunk.dataPointGroups.every((g) => g.raw !== undefined)
      ? { sequenceNumber: chunk.sequenceNumber, rawGroups: chunk.dataPointGroups.map((g) => ({ ...g.dataId, points: g.raw! })) }
      : {
          sequenceNumber: chunk.sequenceNumber,
          groups: chunk.dataPointGroups.map((g) => ({
            name: g.dataId.name,
            type: g.dataId.type,
            points: g.dataPoints.map((p) => ({ elapsedNs: p.elapsedTime, payload: p.payload })),
          })),
        };
    // Only a frame read as raw groups can be reused (received-frames.ts); any group's bytes name it.
    const release = holdFrame(chunk.dataPointGroups[0]?.raw?.raw);
    return new Promise((resolve, reject) => {
      this.queue.push({ up, chunk: c, release, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, MAX_BATCH);
    const lease = leasePayloads();
    try {
      const bySequence = new Map<string, Pending[]>();
      for (const p of batch) {
        const key = `${p.up.sessionId.toLowerCase()} ${p.up.streamId.toLowerCase()}`;
        (bySequence.get(key) ?? bySequence.set(key, []).get(key)!).push(p);
      }
      const groups = [...bySequence.values()];
      const started = performance.now();
      const { results, touched } = (await this.storeAsScript(groups, lease.alloc)) ?? (await this.storeInTransaction(groups, lease.alloc));
      const seconds = (performance.now() - started) / 1000;
      let chunks = 0;
      let committed = 0;
      for (const p of batch) {
        const r = results.get(p)!;
        if (r instanceof Error) p.reject(r);
        else p.resolve(r);
        if (r === "ok") {
          chunks++;
          committed += pointsOf(p.chunk);
        }
      }
      if (committed > 0) this.trace?.committed(committed);
      if (chunks > 0) this.store.commits?.committed(chunks, committed, seconds);
      for (const [meas, project] of touched) this.store.events.publishThrottled(meas, project);
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      lease.release(); // both paths have settled every write that reads them
      for (const p of batch) p.release();
      this.flushing = false;
      this.schedule();
    }
  }

  /**
   * The batch in one script (chunk-script.ts) when every sequence's rows are known from earlier commits;
   * undefined when they are not, or when the script did not commit (the transaction path then decides).
   */
  private async storeAsScript(groups: Pending[][], alloc: (n: number) => Buffer): Promise<Stored | undefined> {
    const db = this.store.db;
    // SQLite only: PostgreSQL runs every batch as a transaction.
    if (!db.script) return undefined;
    const planned: ScriptGroup[] = [];
    const keys: string[] = [];
    for (const items of groups) {
      const up = items[0]!.up;
      const measUuid = up.sessionId.toLowerCase();
      const measurement = this.known.rowOf(measUuid);
      if (!measurement || measurement.projectUuid !== up.projectUuid || measurement.edgeUuid !== up.nodeId.toLowerCase()) return undefined;
      const key = `${measUuid} ${measurement.createdAt}`;
      const known = this.known.of(key);
      const seqId = known?.seqs.get(up.streamId.toLowerCase());
      if (!known || seqId === undefined) return undefined;
      keys.push(key);
      planned.push({ measUuid, measurement, seqId, known, chunks: items.map((p) => p.chunk) });
    }
    try {
      const script = await chunkScript(this.store.files, planned, nowIso(), alloc);
      if (!script) return undefined;
      await allStatements(script.synced);
      await db.script(script.statements);
      const results = new Map<Pending, ChunkResult>();
      const touched = new Map<string, string>();
      groups.forEach((items, i) => {
        for (const p of items) results.set(p, "ok");
        const g = planned[i]!;
        this.known.learn(keys[i]!, items[0]!.up.streamId.toLowerCase(), g.seqId, script.dataIds[i]!);
        touched.set(g.measUuid, g.measurement.projectUuid);
      });
      return { results, touched };
    } catch {
      // A value without a literal, a payload file that failed, or an assumption that did not hold.
      for (const k of keys) this.known.forget(k);
      return undefined;
    }
  }

  private async storeInTransaction(groups: Pending[][], alloc: (n: number) => Buffer): Promise<Stored> {
    const touched = new Map<string, string>();
    /** What the transaction showed to exist, remembered once it committed. */
    const learned: Array<() => void> = [];
    const keys: string[] = [];
    try {
      const locks = groups.flatMap((items) => measurementLock(items[0]!.up.sessionId).locks);
      const results = await this.store.db.transaction(async (tx) => {
        const now = nowIso();
        const out = new Map<Pending, ChunkResult | Error>();
        for (const items of groups) {
          const up = items[0]!.up;
          const found = await this.ensureMeasurement(tx, up, now).catch((e: unknown) => e as Error);
          if (found instanceof Error) {
            for (const p of items) out.set(p, found);
            continue;
          }
          const { uuid: measUuid, row } = found;
          const streamId = up.streamId.toLowerCase();
          // A measurement row is known by uuid and creation time (one deleted and made again is another).
          const mkey = row ? `${measUuid} ${row.created_at}` : undefined;
          if (mkey) keys.push(mkey);
          const w = await writeChunks(tx, this.store.files, measUuid, streamId, items.map((p) => p.chunk), now, mkey ? this.known.of(mkey) : undefined, alloc);
          items.forEach((p, i) => out.set(p, w.results[i]!));
          if (w.stored > 0) {
            await repo.refreshStatus(tx, measUuid, now, row, { chunksStored: true });
            touched.set(measUuid, up.projectUuid);
          }
          if (mkey && row)
            learned.push(() => {
              this.known.learn(mkey, streamId, w.seqId, w.dataIds);
              const open = !row.ended && !row.completed;
              this.known.learnRow(measUuid, open ? { createdAt: row.created_at, projectUuid: row.project_uuid, edgeUuid: row.edge_uuid } : undefined);
            });
        }
        return out;
      }, { locks });
      for (const f of learned) f();
      return { results, touched };
    } catch (err) {
      for (const k of keys) this.known.forget(k);
      throw err;
    }
  }

  /**
   * The session's measurement, created with the edge as owner and the server's receive time as first base time.
   * `row`: the existing measurement as read (undefined when created now).
   */
  private async ensureMeasurement(
    tx: Queryable,
    up: { sessionId: string; projectUuid: string; nodeId: string },
    now: string,
  ): Promise<{ uuid: string; row?: MeasRow }> {
    const uuid = up.sessionId.toLowerCase();
    const m = await repo.findMeasurement(tx, uuid);
    if (m) {
      checkOwner(m, up);
      return { uuid, row: m };
    }
    if (!isUuid(up.nodeId)) throw new NodeNotUuid("a persisted session needs an edge UUID as node id");
    await repo.insertMeasurement(tx, { uuid, project_uuid: up.projectUuid, name: "", description: "", edge_uuid: up.nodeId.toLowerCase(), protected: false, now });
    const { s, nanos } = splitNs(nowNs());
    const type = "api_first_received";
    await repo.insertBaseTime(tx, uuid, { type, name: type, priority: DEFAULT_PRIORITY[type]!, s, nanos, elapsedNs: 0 }, now);
    await repo.refreshBaseTime(tx, uuid);
    return { uuid };
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

  private async writeBaseTime(info: { projectUuid: string; nodeId: string; persist: boolean }, bt: BaseTimeIn): Promise<void> {
    if (!info.persist) return;
    if (!isUuid(bt.sessionId)) throw new SessionRefused("a persisted base time needs a UUID session id");
    let uuid = "";
    await this.store.db.transaction(async (tx) => {
      const now = nowIso();
      ({ uuid } = await this.ensureMeasurement(tx, { sessionId: bt.sessionId, projectUuid: info.projectUuid, nodeId: info.nodeId }, now));
      const elapsedNs = Number(bt.elapsedTime);
      await this.baseTimes.upsertByName(tx, uuid, { name: bt.name, priority: bt.priority, baseTimeNs: bt.baseTime, elapsedNs }, now);
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
        await setExpectations(tx, seq.id, { expected_data_points: Number(close.totalDataPoints), final_sequence_number: close.finalSequenceNumber }, now);
      if (close.closeSession) await repo.patchMeasurement(tx, uuid, { ended: true }, now);
      await repo.refreshStatus(tx, uuid, now);
      return true;
    }, measurementLock(uuid));
    if (found) this.store.events.publish(uuid, up.projectUuid);
  }

  /** Resolves when every queued chunk, base time and close has been written (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.flushing || this.queue.length || this.inFlight.size) {
      await Promise.allSettled([...this.inFlight]);
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}
