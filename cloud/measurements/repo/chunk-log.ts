// SQL of the chunk log (migration 404): the shared group commit appends every stream's chunks to
// meas_chunk_log in commit order, and a compaction moves them into meas_chunks and meas_chunk_payloads, sorted
// by key, a fraction of a second later. A commit then writes the log's last pages and a few pages of its small
// unique index, whatever the number of streams; the per-stream pages of meas_chunks' indexes are written once per
// compaction for many chunks of each stream. Readers (data.ts, sequences.ts) read the log beside the tables.
import type { Queryable, SqlParam } from "../../database/db.js";
import { rowsParam } from "./chunk-batch.js";

export interface LogRow {
  measUuid: string;
  sequenceId: number;
  sequenceNumber: number;
  dataPoints: number;
  minElapsedNs: number;
  maxElapsedNs: number;
  createdAtMs: number;
  /** The bytes in the row (empty when they are in the sequence's payload file). */
  payload: Buffer;
  fileOffset: number | null;
  fileLength: number | null;
}

const COLUMNS =
  "measurement_uuid, sequence_id, sequence_number, data_points, min_elapsed_ns, max_elapsed_ns, created_at_ms, payload, file_offset, file_length";

/**
 * Appends the rows whose key is stored neither in the log nor in meas_chunks; returns the keys appended (a key
 * stored before is left as it was). One statement whatever the row count: on SQLite the rows are a JSON array
 * and their payloads one blob that each row cuts its bytes from; on PostgreSQL one array per column.
 */
export function appendLogRows(q: Queryable, rows: readonly LogRow[]) {
  type Key = { sequence_id: number; sequence_number: number };
  if (q.dialect === "postgres") {
    const values = rows.map((r) => [
      r.measUuid,
      r.sequenceId,
      r.sequenceNumber,
      r.dataPoints,
      r.minElapsedNs,
      r.maxElapsedNs,
      r.createdAtMs,
      r.payload,
      r.fileOffset,
      r.fileLength,
    ]);
    return q.all<Key>(
      `INSERT INTO meas_chunk_log (${COLUMNS})
       SELECT * FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bytea[], ?::bigint[], ?::bigint[])
         AS v(m, s, n, d, lo, hi, at, p, fo, fl)
       WHERE NOT EXISTS (SELECT 1 FROM meas_chunks c WHERE c.sequence_id = v.s AND c.sequence_number = v.n)
       ON CONFLICT DO NOTHING RETURNING sequence_id, sequence_number`,
      rowsParam(q, values, 10),
    );
  }
  // Payload bytes travel as one blob; a row gives its 1-based offset and length there (substr on a blob).
  const blob = Buffer.concat(rows.map((r) => r.payload));
  let at = 1;
  const values = rows.map((r) => {
    const v = [
      r.measUuid,
      r.sequenceId,
      r.sequenceNumber,
      r.dataPoints,
      r.minElapsedNs,
      r.maxElapsedNs,
      r.createdAtMs,
      at,
      r.payload.length,
      r.fileOffset,
      r.fileLength,
    ];
    at += r.payload.length;
    return v;
  });
  return q.all<Key>(
    `INSERT INTO meas_chunk_log (${COLUMNS})
     SELECT v.value->>0, v.value->>1, v.value->>2, v.value->>3, v.value->>4, v.value->>5, v.value->>6,
       ifnull(substr(?, v.value->>7, v.value->>8), x''), v.value->>9, v.value->>10
     FROM json_each(?) AS v
     WHERE NOT EXISTS (SELECT 1 FROM meas_chunks c WHERE c.sequence_id = v.value->>1 AND c.sequence_number = v.value->>2)
     ON CONFLICT DO NOTHING RETURNING sequence_id, sequence_number`,
    [blob, JSON.stringify(values)],
  );
}

const CHUNK_COLUMNS =
  "measurement_uuid, sequence_id, sequence_number, data_points, min_elapsed_ns, max_elapsed_ns, created_at_ms";
const PAYLOAD_COLUMNS = "sequence_id, sequence_number, payload, file_offset, file_length";

/**
 * Which log rows a compaction moves: all, one sequence's, or those of one slice of the sequences (id modulo `of`)
 * that belong to `measurements` (the ones whose locks the compaction holds; on PostgreSQL only theirs are moved,
 * as other instances append to others meanwhile).
 */
export type LogPart = { sequenceId: number } | { slice: number; of: number; measurements: string[] } | undefined;

/** The measurements with rows of this slice of the sequences in the log (what its compaction locks). */
export const logMeasurements = async (q: Queryable, slice: number, of: number) =>
  (
    await q.all<{ m: string }>("SELECT DISTINCT measurement_uuid AS m FROM meas_chunk_log WHERE sequence_id % ? = ?", [
      of,
      slice,
    ])
  ).map((r) => r.m);

/**
 * Moves the log's rows (`part` of them) into meas_chunks and meas_chunk_payloads, in key order. Returns how many
 * it moved. On PostgreSQL it is one statement, so a row another transaction commits meanwhile is either moved
 * whole or left for the next compaction, never deleted unmoved.
 */
export async function compactLog(q: Queryable, part?: LogPart): Promise<number> {
  let only = part === undefined ? "" : "sequenceId" in part ? " WHERE sequence_id = ?" : " WHERE sequence_id % ? = ?";
  const args: SqlParam[] = part === undefined ? [] : "sequenceId" in part ? [part.sequenceId] : [part.of, part.slice];
  if (q.dialect === "postgres") {
    if (part !== undefined && "measurements" in part) {
      only += " AND measurement_uuid = ANY(?::text[])";
      args.push(part.measurements as unknown as SqlParam);
    }
    const [r] = await q.all<{ n: number }>(
      `WITH moved AS (DELETE FROM meas_chunk_log${only} RETURNING *),
         chunks AS (INSERT INTO meas_chunks (${CHUNK_COLUMNS}) SELECT ${CHUNK_COLUMNS} FROM moved ORDER BY sequence_id, sequence_number
           ON CONFLICT DO NOTHING),
         payloads AS (INSERT INTO meas_chunk_payloads (${PAYLOAD_COLUMNS}) SELECT ${PAYLOAD_COLUMNS} FROM moved ORDER BY sequence_id, sequence_number
           ON CONFLICT DO NOTHING)
       SELECT COUNT(*) AS n FROM moved`,
      args,
    );
    return Number(r?.n ?? 0);
  }
  // SQLite: inside the caller's transaction, and SQLite has one writer, so nothing is appended meanwhile.
  await q.run(
    `INSERT OR IGNORE INTO meas_chunks (${CHUNK_COLUMNS}) SELECT ${CHUNK_COLUMNS} FROM meas_chunk_log${only} ORDER BY sequence_id, sequence_number`,
    args,
  );
  await q.run(
    `INSERT OR IGNORE INTO meas_chunk_payloads (${PAYLOAD_COLUMNS}) SELECT ${PAYLOAD_COLUMNS} FROM meas_chunk_log${only} ORDER BY sequence_id, sequence_number`,
    args,
  );
  return (await q.run(`DELETE FROM meas_chunk_log${only}`, args)).changes;
}
