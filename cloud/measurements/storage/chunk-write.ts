// Writes chunks of one sequence inside a caller's transaction: one row per sequence number,
// a repeated number is reported as skipped and changes nothing.
import { allStatements, type Queryable } from "../../database/db.js";
import { dataIdKey, type Known } from "../ingest/known-rows.js";
import { encodeChunk, type Chunk } from "../formats/codec.js";
import { encodeRawChunk, type PreparedChunk, type RawChunk } from "../formats/raw-chunk.js";
import type { PayloadFiles } from "./payload-files.js";
import { raiseMaxElapsed } from "../repo/measurements.js";
import { addDataIds, addReceived, ensureSequence, insertChunks, type ChunkRowInput } from "../repo/sequences.js";

export type ChunkResult = "ok" | "skipped";

const clamp = (n: bigint) =>
  Number(n > 9007199254740991n ? 9007199254740991n : n < -9007199254740991n ? -9007199254740991n : n);

export function chunkStats(c: Chunk): { points: number; min: number; max: number } {
  let points = 0;
  let min: bigint | undefined;
  let max: bigint | undefined;
  for (const g of c.groups)
    for (const p of g.points) {
      points++;
      if (min === undefined || p.elapsedNs < min) min = p.elapsedNs;
      if (max === undefined || p.elapsedNs > max) max = p.elapsedNs;
    }
  return { points, min: clamp(min ?? 0n), max: clamp(max ?? 0n) };
}

/** The stored row payload and its figures, from decoded points or from received bytes. */
function prepare(c: Chunk | RawChunk, alloc?: (n: number) => Buffer): PreparedChunk {
  if ("rawGroups" in c) return encodeRawChunk(c, alloc);
  const st = chunkStats(c);
  return { payload: encodeChunk(c), points: st.points, minElapsedNs: st.min, maxElapsedNs: st.max };
}

const idsOf = (c: Chunk | RawChunk) => ("rawGroups" in c ? c.rawGroups : c.groups);

/** A chunk's row; `fileOffset` and `fileLength` say where its payload went when it went to the sequence's file. */
export type ChunkRow = ChunkRowInput & {
  chunk: Chunk | RawChunk;
  fileOffset: number | null;
  fileLength: number | null;
};

/**
 * A row per chunk of the batch; a number repeated in the batch gets none. `firstAt`: each number's first chunk,
 * undefined when the numbers only rise (each chunk is then its number's first: no map made per stream).
 */
export function chunkRows(
  measUuid: string,
  seqId: number,
  chunks: ReadonlyArray<Chunk | RawChunk>,
  createdAtMs: number,
  alloc?: (n: number) => Buffer,
): { rows: ChunkRow[]; firstAt: Map<number, number> | undefined } {
  const rows: ChunkRow[] = [];
  let firstAt: Map<number, number> | undefined;
  let last = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i]!;
    const n = c.sequenceNumber;
    if (firstAt === undefined && n <= last) firstAt = new Map(chunks.slice(0, i).map((d, j) => [d.sequenceNumber, j]));
    if (firstAt !== undefined) {
      if (firstAt.has(n)) continue;
      firstAt.set(n, i);
    }
    last = n;
    const st = prepare(c, alloc);
    rows.push({
      measUuid,
      sequenceId: seqId,
      sequenceNumber: n,
      dataPoints: st.points,
      minElapsedNs: st.minElapsedNs,
      maxElapsedNs: st.maxElapsedNs,
      payload: st.payload,
      createdAtMs,
      chunk: c,
      fileOffset: null,
      fileLength: null,
    });
  }
  return { rows, firstAt };
}

/** Whether chunk `i` of a batch is the first with its number (chunkRows' `firstAt`). */
export const isFirst = (firstAt: ReadonlyMap<number, number> | undefined, n: number, i: number) =>
  firstAt === undefined || firstAt.get(n) === i;

/** What stored rows add to their sequence and measurement: data ids (newIds: those not in `known`), points, the highest elapsed time. */
export function tally(rows: readonly ChunkRow[], known?: Known) {
  const dataIds = new Set<string>();
  const newIds: Array<{ type: string; name: string }> = [];
  let points = 0;
  let maxElapsed = Number.NEGATIVE_INFINITY;
  // A stream's chunks mostly repeat one data id: its key is made once, not per chunk.
  let lastType: string | undefined;
  let lastName: string | undefined;
  for (const r of rows) {
    for (const g of idsOf(r.chunk)) {
      if (g.type === lastType && g.name === lastName) continue;
      lastType = g.type;
      lastName = g.name;
      const key = dataIdKey(g.type, g.name);
      if (dataIds.has(key)) continue;
      dataIds.add(key);
      if (!known?.ids.has(key)) newIds.push({ type: g.type, name: g.name });
    }
    points += r.dataPoints;
    if (r.dataPoints > 0) maxElapsed = Math.max(maxElapsed, r.maxElapsedNs);
  }
  return { dataIds, newIds, points, maxElapsed };
}

export interface ChunkWrite {
  results: ChunkResult[];
  stored: number;
  /** Data points of the chunks stored. */
  points: number;
  /** The sequence row's id, and the data ids (dataIdKey) of the chunks stored: rows that exist once committed. */
  seqId: number;
  dataIds: string[];
}

/**
 * `known`: rows known to exist for this measurement row (known-rows.ts); their statements are skipped. `alloc`:
 * where received chunks' stored payloads are built (a caller reusing them waits for this call to settle). After
 * the chunk rows, the payloads, data ids and counters are written side by side (they do not depend on each other).
 */
export async function writeChunks(
  tx: Queryable,
  files: PayloadFiles,
  measUuid: string,
  sequenceUuid: string,
  chunks: ReadonlyArray<Chunk | RawChunk>,
  now: string,
  known?: Known,
  alloc?: (n: number) => Buffer,
): Promise<ChunkWrite> {
  const seqId = known?.seqs.get(sequenceUuid) ?? (await ensureSequence(tx, measUuid, sequenceUuid, now)).id;
  const { rows, firstAt } = chunkRows(measUuid, seqId, chunks, Date.parse(now), alloc);
  // Stored before: not inserted, reported as skipped.
  const { inserted, payloads } =
    rows.length > 0 ? await insertChunks(tx, files, rows) : { inserted: new Set<number>(), payloads: [] };
  const { dataIds, newIds, points, maxElapsed } = tally(
    rows.filter((r) => inserted.has(r.sequenceNumber)),
    known,
  );
  const results = chunks.map(
    (c, i): ChunkResult => (inserted.has(c.sequenceNumber) && isFirst(firstAt, c.sequenceNumber, i) ? "ok" : "skipped"),
  );
  const writes = [...payloads];
  if (inserted.size > 0) {
    if (newIds.length > 0) writes.push(addDataIds(tx, measUuid, newIds));
    writes.push(addReceived(tx, seqId, points, inserted.size, now));
    if (Number.isFinite(maxElapsed)) writes.push(raiseMaxElapsed(tx, measUuid, maxElapsed, now));
  }
  await allStatements(writes);
  return { results, stored: inserted.size, points, seqId, dataIds: [...dataIds] };
}
