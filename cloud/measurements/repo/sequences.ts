// SQL for sequences and their chunks. A chunk row is keyed by (sequence, sequence_number): a
// number already stored is skipped (and INSERT OR IGNORE backs that up), so uploads are idempotent.
import { allStatements, heard, type Queryable, type SqlParam } from "../../database/db.js";
import type { SequenceRow } from "../service/model.js";
import type { PayloadFiles } from "../storage/payload-files.js";
import { compactLog, packStart } from "./chunk-log.js";

export const listSequences = (q: Queryable, measUuid: string) =>
  q.all<SequenceRow>("SELECT * FROM meas_sequences WHERE measurement_uuid = ? ORDER BY created_at, id", [measUuid]);

export const allSequenceIds = async (q: Queryable) =>
  new Set((await q.all<{ id: number }>("SELECT id FROM meas_sequences")).map((r) => r.id));

/** Per sequence with payloads in a file, the end of the last byte its rows reference (what a backup copies). */
export const payloadFileEnds = async (q: Queryable) =>
  new Map(
    (
      await q.all<{ sequence_id: number; end: number }>(
        `SELECT sequence_id, MAX(file_offset + file_length) AS end FROM (
           SELECT sequence_id, file_offset, file_length FROM meas_chunk_payloads WHERE file_length IS NOT NULL
           UNION ALL SELECT sequence_id, file_offset, file_length FROM meas_chunk_log WHERE file_length IS NOT NULL) AS f
         GROUP BY sequence_id`,
      )
    ).map((r) => [r.sequence_id, r.end]),
  );

export const findSequence = (q: Queryable, measUuid: string, uuid: string) =>
  q.get<SequenceRow>("SELECT * FROM meas_sequences WHERE measurement_uuid = ? AND uuid = ?", [measUuid, uuid]);

/** The highest chunk numbers stored for a sequence, at most `limit`, highest first. */
export async function storedChunkNumbers(q: Queryable, measUuid: string, uuid: string, limit: number) {
  // Each row holds the numbers lo..hi (a pack holds consecutive numbers; none is in two rows): `limit` rows suffice.
  const rows = await q.all<{ lo: number; hi: number }>(
    `SELECT lo, hi FROM (
       SELECT * FROM (SELECT c.sequence_number AS lo, COALESCE(c.last_number, c.sequence_number) AS hi FROM meas_chunks c
         JOIN meas_sequences s ON s.id = c.sequence_id WHERE s.measurement_uuid = ? AND s.uuid = ? ORDER BY c.sequence_number DESC LIMIT ?) AS a
       UNION ALL
       SELECT * FROM (SELECT c.sequence_number AS lo, c.sequence_number AS hi FROM meas_chunk_log c JOIN meas_sequences s ON s.id = c.sequence_id
         WHERE s.measurement_uuid = ? AND s.uuid = ? ORDER BY c.sequence_number DESC LIMIT ?) AS b) AS u
     ORDER BY lo DESC LIMIT ?`,
    [measUuid, uuid, limit, measUuid, uuid, limit, limit],
  );
  const numbers: number[] = [];
  for (const r of rows) for (let n = Number(r.hi); n >= Number(r.lo) && numbers.length < limit; n--) numbers.push(n);
  return numbers;
}

/** The numbers from `lo` to `hi` stored in a sequence's chunk rows (those of a pack included). */
export async function storedNumbersIn(q: Queryable, sequenceId: number, lo: number, hi: number): Promise<Set<number>> {
  const rows = await q.all<{ lo: number; hi: number }>(
    `SELECT c.sequence_number AS lo, COALESCE(c.last_number, c.sequence_number) AS hi FROM meas_chunks c
     WHERE c.sequence_id = ? AND c.sequence_number <= ? AND c.sequence_number >= COALESCE(${packStart("?", "?")}, ?)`,
    [sequenceId, hi, sequenceId, lo, lo],
  );
  const stored = new Set<number>();
  for (const r of rows) for (let n = Math.max(lo, Number(r.lo)); n <= Math.min(hi, Number(r.hi)); n++) stored.add(n);
  return stored;
}

/** The sequence, created when missing: one statement (on conflict a no-op update returns the existing row). */
export async function ensureSequence(q: Queryable, measUuid: string, uuid: string, now: string): Promise<SequenceRow> {
  const [row] = await q.all<SequenceRow>(
    `INSERT INTO meas_sequences (measurement_uuid, uuid, created_at, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (measurement_uuid, uuid) DO UPDATE SET uuid = excluded.uuid RETURNING *`,
    [measUuid, uuid, now, now],
  );
  return row!;
}

export interface SequenceExpectations {
  expected_data_points?: number | null;
  final_sequence_number?: number | null;
}

/** Sets the given expectation fields (null clears one; undefined leaves it). */
export async function setExpectations(q: Queryable, id: number, e: SequenceExpectations, now: string): Promise<void> {
  const sets = ["updated_at = ?"];
  const args: SqlParam[] = [now];
  for (const key of ["expected_data_points", "final_sequence_number"] as const)
    if (e[key] !== undefined) sets.push(`${key} = ?`), args.push(e[key]);
  await q.run(`UPDATE meas_sequences SET ${sets.join(", ")} WHERE id = ?`, [...args, id]);
}

export interface ChunkRowInput {
  measUuid: string;
  sequenceId: number;
  sequenceNumber: number;
  dataPoints: number;
  minElapsedNs: number;
  maxElapsedNs: number;
  payload: Buffer;
  createdAtMs: number;
}

/** A chunk row's columns and values (insertChunks). */
export const CHUNK_COLUMNS =
  "(measurement_uuid, sequence_id, sequence_number, data_points, min_elapsed_ns, max_elapsed_ns, created_at_ms)";
export const chunkValues = (c: ChunkRowInput) => [
  c.measUuid,
  c.sequenceId,
  c.sequenceNumber,
  c.dataPoints,
  c.minElapsedNs,
  c.maxElapsedNs,
  c.createdAtMs,
];

export const PAYLOAD_COLUMNS = "(sequence_id, sequence_number, payload, file_offset, file_length)";
const NO_BYTES = Buffer.alloc(0);
/** A payload row: the bytes in the row, or (`offset` given) where they are in the sequence's payload file. */
export const payloadValues = (c: ChunkRowInput, offset: number | undefined) =>
  offset === undefined
    ? [c.sequenceId, c.sequenceNumber, c.payload, null, null]
    : [c.sequenceId, c.sequenceNumber, NO_BYTES, offset, c.payload.length];

/**
 * Appends the payloads larger than files.inlineMax (INLINE_MAX) (up to a page they stay in their row, cheap there and with no
 * fsync) to the file of their sequence (one for all `rows`): where each went, and the write to await before the
 * rows commit (undefined when none went to the file).
 */
export async function fileLargePayloads(
  files: PayloadFiles,
  rows: readonly ChunkRowInput[],
): Promise<{ at: Map<ChunkRowInput, number>; synced?: Promise<void> }> {
  const at = new Map<ChunkRowInput, number>();
  const big = rows.filter((c) => c.payload.length > files.inlineMax);
  if (big.length === 0) return { at };
  const { offsets, synced } = await files.append(
    big[0]!.sequenceId,
    big.map((c) => c.payload),
  );
  big.forEach((c, j) => at.set(c, offsets[j]!));
  return { at, synced };
}

/**
 * Inserts the rows whose sequence number is not stored yet, many per statement, and returns the numbers
 * inserted (a number already stored is left as it was) and their payload writes (a row holding the
 * payload, or saying where in the sequence's payload file it is), still running: the caller awaits them with its other writes
 * (allStatements). All rows are of one sequence.
 */
export async function insertChunks(
  q: Queryable,
  files: PayloadFiles,
  rows: readonly ChunkRowInput[],
): Promise<{ inserted: Set<number>; payloads: Promise<unknown>[] }> {
  const inserted = new Set<number>();
  const payloads: Promise<unknown>[] = [];
  // Numbers the real-time path stored are still in the chunk log: moved first, so they count as stored here.
  if (rows.length === 0) return { inserted, payloads };
  await compactLog(q, { sequenceId: rows[0]!.sequenceId });
  // A number inside a pack is stored though no row is keyed by it: left out here.
  let lo = rows[0]!.sequenceNumber;
  let hi = lo;
  for (const { sequenceNumber: n } of rows) {
    if (n < lo) lo = n;
    else if (n > hi) hi = n;
  }
  const packed = await storedNumbersIn(q, rows[0]!.sequenceId, lo, hi);
  const fresh = packed.size === 0 ? rows : rows.filter((c) => !packed.has(c.sequenceNumber));
  try {
    for (let i = 0; i < fresh.length; i += 100) {
      const part = fresh.slice(i, i + 100);
      const got = await q.all<{ n: number }>(
        `INSERT OR IGNORE INTO meas_chunks ${CHUNK_COLUMNS}
         VALUES ${part.map(() => "(?, ?, ?, ?, ?, ?, ?)").join(", ")} RETURNING sequence_number AS n`,
        part.flatMap(chunkValues),
      );
      if (got.length === 0) continue;
      const added = new Set(got.map((r) => r.n));
      const news = part.filter((c) => added.has(c.sequenceNumber));
      const { at, synced } = await fileLargePayloads(files, news);
      if (synced) payloads.push(heard(synced));
      payloads.push(
        heard(
          q.run(
            `INSERT INTO meas_chunk_payloads ${PAYLOAD_COLUMNS} VALUES ${news.map(() => "(?, ?, ?, ?, ?)").join(", ")}`,
            news.flatMap((c) => payloadValues(c, at.get(c))),
          ),
        ),
      );
      for (const n of added) inserted.add(n);
    }
  } catch (e) {
    // Nothing of this transaction may still be running when the caller rolls back.
    await allStatements(payloads).catch(() => undefined);
    throw e;
  }
  return { inserted, payloads };
}

export const addReceived = (q: Queryable, sequenceId: number, points: number, chunks: number, now: string) =>
  q.run(
    `UPDATE meas_sequences SET received_data_points = received_data_points + ?, received_chunks_count = received_chunks_count + ?,
       updated_at = ? WHERE id = ?`,
    [points, chunks, now, sequenceId],
  );

/** Remembers the data IDs a measurement has stored (for listProjectDataPointDataIDs). */
export async function addDataIds(
  q: Queryable,
  measUuid: string,
  ids: ReadonlyArray<{ type: string; name: string }>,
): Promise<void> {
  for (let i = 0; i < ids.length; i += 200) {
    const part = ids.slice(i, i + 200);
    await q.run(
      `INSERT OR IGNORE INTO meas_data_ids (measurement_uuid, data_type, data_name) VALUES ${part.map(() => "(?, ?, ?)").join(", ")}`,
      part.flatMap((d) => [measUuid, d.type, d.name]),
    );
  }
}

export function dataIdsOf(q: Queryable, measUuids: readonly string[]) {
  if (measUuids.length === 0) return Promise.resolve([]);
  return q.all<{ data_type: string; data_id: string }>(
    `SELECT DISTINCT data_type, data_name AS data_id FROM meas_data_ids WHERE measurement_uuid IN (${measUuids.map(() => "?").join(",")})
     ORDER BY data_type, data_name`,
    [...measUuids],
  );
}
