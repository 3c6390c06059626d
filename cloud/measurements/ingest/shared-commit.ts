// One group commit for the chunks of every stream that arrived while the last one ran: a fixed handful of
// multi-row statements (repo/chunk-batch.ts) whatever the number of streams and chunks, inside the caller's
// transaction, sessions seen for the first time included (their measurements are made together).
//
// In order: the batch's measurement rows (one read) and, on SQLite, beside it the numbers stored before (one
// read); the measurements of new sessions (three), sequence rows not known from earlier commits (one upsert);
// then side by side the chunk log's rows (one insert; on PostgreSQL it skips the keys stored before and says
// which, before the rest), payload files for large chunks, data ids, sequence counters and the measurements'
// status. Never a row per chunk stored is read back. A measurement ended or completed before its chunks arrived
// has its status recomputed from its sequences, as any write does.
import { allStatements, heard, type Queryable } from "../../database/db.js";
import type { Chunk } from "../formats/codec.js";
import type { RawChunk } from "../formats/raw-chunk.js";
import { chunkRows, isFirst, tally, type ChunkResult, type ChunkRow } from "../storage/chunk-write.js";
import type { PayloadFiles } from "../storage/payload-files.js";
import * as batch from "../repo/chunk-batch.js";
import { appendLogRows, storedInRuns, type LogStream } from "../repo/chunk-log.js";
import { appendPacks, appendPacksPg } from "../repo/pack-append.js";
import { findMeasurement, raiseMaxElapsed, refreshStatus } from "../repo/measurements.js";
import { measurementState, type MeasurementState } from "../service/events.js";
import { fileLargePayloads } from "../repo/sequences.js";
import { dataIdKey, type KnownRows } from "./known-rows.js";
import { checkOwner, FIRST_BASETIME, NodeNotUuid, SessionRefused, type SessionOwner } from "./session-measurement.js";
import { isUuid } from "../formats/codec.js";
import { nowNs } from "../formats/time.js";
import { DEFAULT_PRIORITY, splitNs } from "../service/model.js";

/** The chunks of one stream in this commit. */
export interface StreamChunks {
  up: SessionOwner & { streamId: string };
  chunks: ReadonlyArray<Chunk | RawChunk>;
}

export interface SharedCommit {
  /** Per stream, in order: each chunk's answer, or the refusal of the whole stream's chunks. */
  results: Array<ChunkResult[] | Error>;
  /** Measurements that took chunks (uuid -> project uuid). */
  touched: Map<string, string>;
  /** Measurements whose status the chunks changed (an ended one completed), with the state committed (events.ts). */
  changed: Map<string, MeasurementState>;
  stored: number;
  /** Of the chunks stored, those appended to the chunk log (for its compaction; the rest were written as packs). */
  logged: number;
  points: number;
  /** Remembers what the commit showed to exist (known-rows.ts); call once it committed. */
  learn(): void;
  /** The measurement rows' keys the commit relied on (forgotten if it does not commit). */
  keys: string[];
}

interface Planned {
  index: number;
  measUuid: string;
  streamId: string;
  row: batch.SessionRow;
  key: string;
  seqId: number;
  rows: ChunkRow[];
  firstAt: Map<number, number> | undefined;
  fresh: ChunkRow[];
}

const rowKey = (m: batch.SessionRow) => `${m.uuid} ${m.created_at}`;

/** PostgreSQL's text holds no NUL character: such a stream is refused alone, not the whole commit with it. */
const hasNul = (c: Chunk | RawChunk) =>
  ("rawGroups" in c ? c.rawGroups : c.groups).some((g) => g.name.includes("\u0000") || g.type.includes("\u0000"));

/** The rows of the batch's measurements, making those of sessions seen for the first time (together). */
async function measurementRows(
  tx: Queryable,
  streams: readonly StreamChunks[],
  now: string,
  refused: Map<number, Error>,
): Promise<Map<string, batch.SessionRow>> {
  const uuids = [...new Set(streams.map((s) => s.up.sessionId.toLowerCase()))];
  const rows = new Map((await batch.findMeasurements(tx, uuids)).map((m) => [m.uuid, m]));
  const made = new Map<string, batch.NewSession>();
  const { s, nanos } = splitNs(nowNs());
  for (const [i, st] of streams.entries()) {
    const uuid = st.up.sessionId.toLowerCase();
    if (rows.has(uuid) || made.has(uuid)) continue;
    // The node becomes the measurement's edge_uuid; the first stream of a new session in the batch owns it.
    if (isUuid(st.up.nodeId))
      made.set(uuid, { uuid, projectUuid: st.up.projectUuid, edgeUuid: st.up.nodeId.toLowerCase(), s, nanos });
    else refused.set(i, new NodeNotUuid("a persisted session needs an edge UUID as node id"));
  }
  if (made.size > 0) {
    await batch.insertSessionMeasurements(
      tx,
      [...made.values()],
      FIRST_BASETIME,
      DEFAULT_PRIORITY[FIRST_BASETIME]!,
      now,
    );
    for (const m of await batch.findMeasurements(tx, [...made.keys()])) rows.set(m.uuid, m);
  }
  return rows;
}

export async function commitStreams(
  tx: Queryable,
  files: PayloadFiles,
  streams: readonly StreamChunks[],
  now: string,
  known: KnownRows,
  alloc?: (n: number) => Buffer,
  /** SQLite: write each stream's chunks as packs at once, not to the chunk log (the journal's apply). */
  packed = false,
): Promise<SharedCommit> {
  // SQLite: the numbers stored before are read beside the measurement rows (and the transaction's BEGIN), and the
  // log insert then goes out with the counters' updates, so a steady commit waits for SQLite's thread three times
  // (upstream-store.ts runs it with earlyReads). PostgreSQL: the insert itself skips and answers them.
  const early =
    tx.dialect === "sqlite"
      ? heard(
          storedInRuns(
            tx,
            streams.map((s) => ({
              measUuid: s.up.sessionId.toLowerCase(),
              streamUuid: s.up.streamId.toLowerCase(),
              numbers: s.chunks.map((c) => c.sequenceNumber),
            })),
          ),
        )
      : undefined;
  const refused = new Map<number, Error>();
  const planned: Planned[] = [];
  try {
    await plan(tx, streams, now, known, refused, planned, alloc);
  } catch (e) {
    await early?.catch(() => undefined); // nothing still reading once this throws
    throw e;
  }
  const skipped = new Map<number, Set<number>>();
  if (early !== undefined) {
    const stored = await early;
    for (const p of planned) {
      const gone = stored.get(`${p.measUuid} ${p.streamId}`);
      if (gone !== undefined) skipped.set(p.seqId, gone);
    }
    freshRows(planned, skipped);
  }
  // Payloads larger than a page go to their sequence's file first (where they land is then known); the rest
  // travel in their log row. On PostgreSQL every payload stays in its row (inlineMax is unbounded there).
  const synced: Array<Promise<unknown>> = [];
  try {
    for (const p of planned) {
      const rows = early === undefined ? p.rows : p.fresh;
      if (!rows.some((r) => r.payload.length > files.inlineMax)) continue;
      const filed = await fileLargePayloads(files, rows);
      if (filed.synced) synced.push(heard(filed.synced));
      for (const [r, at] of filed.at as Map<ChunkRow, number>) {
        r.fileOffset = at;
        r.fileLength = r.payload.length;
        r.payload = NO_BYTES;
      }
    }
  } catch (e) {
    await Promise.allSettled(synced); // nothing still writing once this throws
    throw e;
  }
  const logStreams = (pick: (p: Planned) => ChunkRow[]): LogStream[] =>
    planned.map((p) => ({ measUuid: p.measUuid, sequenceId: p.seqId, rows: pick(p) }));
  if (early !== undefined) {
    const fresh = logStreams((p) => p.fresh);
    const createdAtMs = Date.parse(now);
    synced.push(heard<unknown>(packed ? appendPacks(tx, fresh, createdAtMs) : appendLogRows(tx, fresh, createdAtMs)));
    return write(tx, streams, planned, skipped, refused, now, known, synced, () => !packed);
  }
  // PostgreSQL: a stream with PACK_AT_COMMIT chunks or more in this commit is written as packs at once, the
  // others go to the log for the compaction to pack with their later chunks. (A batch holds each stream once,
  // commit-batch.ts `streamsOf`, and its rows each number once, so no pack repeats a number.)
  const rows = logStreams((p) => p.rows);
  const asPacks = new Set(rows.filter((s) => s.rows.length >= PACK_AT_COMMIT).map((s) => s.sequenceId));
  const stored = await appended(tx, rows, asPacks, Date.parse(now), synced);
  for (const k of stored) {
    const id = Number(k.sequence_id);
    (skipped.get(id) ?? skipped.set(id, new Set()).get(id)!).add(Number(k.sequence_number));
  }
  freshRows(planned, skipped);
  return write(tx, streams, planned, skipped, refused, now, known, synced, (p) => !asPacks.has(p.seqId));
}

/**
 * PostgreSQL: a stream with at least this many chunks in a commit is written as packs at once (a backlog, a fast
 * stream: the packs are about as large as the compaction's); with fewer, a pack per commit would be a row per
 * chunk or two in each of meas_chunks' indexes, so they go to the log.
 */
export const PACK_AT_COMMIT = 8;

/** Each stream's rows but those whose numbers were stored before. */
function freshRows(planned: readonly Planned[], skipped: ReadonlyMap<number, ReadonlySet<number>>): void {
  for (const p of planned) {
    const gone = skipped.get(p.seqId);
    p.fresh = gone === undefined ? p.rows : p.rows.filter((r) => !gone.has(r.sequenceNumber));
  }
}

/** The streams' measurements (made for new sessions), owners checked, sequences ensured, and their rows. */
async function plan(
  tx: Queryable,
  streams: readonly StreamChunks[],
  now: string,
  known: KnownRows,
  refused: Map<number, Error>,
  planned: Planned[],
  alloc?: (n: number) => Buffer,
): Promise<void> {
  const rows = await measurementRows(tx, streams, now, refused);
  const needSequence: Planned[] = [];
  for (const [index, s] of streams.entries()) {
    const measUuid = s.up.sessionId.toLowerCase();
    const row = rows.get(measUuid);
    if (refused.has(index)) continue;
    if (!row) {
      refused.set(index, new SessionRefused("the session's measurement could not be made"));
      continue;
    }
    try {
      checkOwner(row, s.up);
    } catch (e) {
      refused.set(index, e as Error);
      continue;
    }
    if (tx.dialect === "postgres" && s.chunks.some(hasNul)) {
      refused.set(index, new Error("a data name or type with a NUL character cannot be stored on PostgreSQL"));
      continue;
    }
    const key = rowKey(row);
    const streamId = s.up.streamId.toLowerCase();
    const p: Planned = {
      index,
      measUuid,
      streamId,
      row,
      key,
      seqId: known.of(key)?.seqs.get(streamId) ?? -1,
      rows: [],
      firstAt: undefined,
      fresh: [],
    };
    if (p.seqId < 0) needSequence.push(p);
    planned.push(p);
  }
  if (needSequence.length > 0) {
    const ids = new Map(
      (
        await batch.ensureSequences(
          tx,
          needSequence.map((p) => ({ measUuid: p.measUuid, uuid: p.streamId })),
          now,
        )
      ).map((r) => [`${r.measurement_uuid} ${r.uuid}`, r.id]),
    );
    for (const p of needSequence) p.seqId = ids.get(`${p.measUuid} ${p.streamId}`)!;
  }
  const createdAtMs = Date.parse(now);
  for (const p of planned)
    ({ rows: p.rows, firstAt: p.firstAt } = chunkRows(
      p.measUuid,
      p.seqId,
      streams[p.index]!.chunks,
      createdAtMs,
      alloc,
    ));
}

/**
 * The rows appended: the streams of `packed` (sequence ids) as packs (appendPacksPg), the others to the log
 * (appendLogRows); the keys stored before. The payload files' writes settled before a failure is passed on.
 */
async function appended(
  tx: Queryable,
  streams: readonly LogStream[],
  packed: ReadonlySet<number>,
  createdAtMs: number,
  synced: ReadonlyArray<Promise<unknown>>,
) {
  try {
    if (packed.size === 0) return await appendLogRows(tx, streams, createdAtMs);
    const toLog = streams.filter((s) => !packed.has(s.sequenceId));
    const stored = await appendPacksPg(
      tx,
      streams.filter((s) => packed.has(s.sequenceId)),
      createdAtMs,
    );
    return toLog.length === 0 ? stored : [...stored, ...(await appendLogRows(tx, toLog, createdAtMs))];
  } catch (e) {
    await Promise.allSettled(synced);
    throw e;
  }
}

async function write(
  tx: Queryable,
  streams: readonly StreamChunks[],
  planned: readonly Planned[],
  /** Per sequence id, the numbers the chunk insert left because they were stored before. */
  skipped: ReadonlyMap<number, ReadonlySet<number>>,
  refused: ReadonlyMap<number, Error>,
  now: string,
  known: KnownRows,
  /** The payload files' writes, each already heard: the commit waits for them. */
  synced: ReadonlyArray<Promise<unknown>>,
  /** Whether a stream's chunks went to the chunk log (or were written as packs). */
  logged: (p: Planned) => boolean,
): Promise<SharedCommit> {
  // Every write below starts now and is awaited together: each is marked heard at once (a full disk fails
  // one while the others are still being started).
  const writes: Array<Promise<unknown>> = [...synced];
  const dataIds: Array<{ measUuid: string; type: string; name: string }> = [];
  const idsSeen = new Set<string>();
  const received: Array<{ sequenceId: number; points: number; chunks: number }> = [];
  const maxElapsed = new Map<string, number | null>();
  const learned: Array<[string, string, number, string[]]> = [];
  const touched = new Map<string, string>();
  let stored = 0;
  let toLog = 0;
  let points = 0;
  try {
    for (const p of planned) {
      const t = tally(p.fresh, known.of(p.key));
      learned.push([p.key, p.streamId, p.seqId, [...t.dataIds]]);
      if (p.fresh.length === 0) continue;
      for (const d of t.newIds) {
        // Two streams of one measurement may bring the same new data id.
        const k = `${p.measUuid} ${dataIdKey(d.type, d.name)}`;
        if (idsSeen.has(k)) continue;
        idsSeen.add(k);
        dataIds.push({ measUuid: p.measUuid, type: d.type, name: d.name });
      }
      received.push({ sequenceId: p.seqId, points: t.points, chunks: p.fresh.length });
      const before = maxElapsed.get(p.measUuid);
      const max = Number.isFinite(t.maxElapsed) ? t.maxElapsed : null;
      maxElapsed.set(
        p.measUuid,
        before === undefined || before === null ? max : max === null ? before : Math.max(before, max),
      );
      touched.set(p.measUuid, streams[p.index]!.up.projectUuid);
      stored += p.fresh.length;
      if (logged(p)) toLog += p.fresh.length;
      points += t.points;
    }
  } catch (e) {
    await Promise.allSettled(writes); // nothing still writing once this throws
    throw e;
  }
  const rowOf = new Map(planned.map((p) => [p.measUuid, p.row]));
  const open = [...maxElapsed].filter(([uuid]) => !rowOf.get(uuid)!.ended && !rowOf.get(uuid)!.completed);
  const measuring = open.map(([uuid, max]) => ({ uuid, maxElapsedNs: max }));
  for (const w of batch.recordTally(tx, { dataIds, received, measuring }, now)) writes.push(heard(w));
  await allStatements(writes);
  // Ended or completed before these chunks: the status follows from the sequences' counts just written.
  const changed = new Map<string, MeasurementState>();
  for (const [uuid, max] of maxElapsed) {
    const row = rowOf.get(uuid)!;
    if (!row.ended && !row.completed) continue;
    if (max !== null) await raiseMaxElapsed(tx, uuid, max, now);
    const status = await refreshStatus(tx, uuid, now);
    if (status && status.after !== status.before) changed.set(uuid, measurementState(await findMeasurement(tx, uuid)));
  }
  const results = streams.map((_, i): ChunkResult[] | Error => refused.get(i) ?? []);
  for (const p of planned) {
    const gone = skipped.get(p.seqId);
    results[p.index] = streams[p.index]!.chunks.map((c, i) =>
      !gone?.has(c.sequenceNumber) && isFirst(p.firstAt, c.sequenceNumber, i) ? "ok" : "skipped",
    );
  }
  return {
    results,
    touched,
    changed,
    stored,
    logged: toLog,
    points,
    keys: planned.map((p) => p.key),
    learn: () => {
      for (const [key, streamId, seqId, ids] of learned) known.learn(key, streamId, seqId, ids);
    },
  };
}

const NO_BYTES = Buffer.alloc(0);
