// SQL of a commit that writes its chunks as packs (migration 405) at once, without the chunk log, where a commit
// brings several chunks of a stream together: the ingest journal's apply on SQLite (ingest/ingest-journal.ts, a
// quarter of a second or more of each stream), and on PostgreSQL a group commit's streams with enough chunks in it
// (a backlog, a fast stream). They are packed as they are written, and no log row is inserted, compacted and
// deleted for them. Two statements on SQLite, one on PostgreSQL, whatever the number of streams and chunks.
import type { Queryable } from "../../database/db.js";
import {
  CHUNK_COLUMNS,
  NOT_PACKED,
  PACK_CHUNKS,
  PAYLOAD_COLUMNS,
  packs as packsOf,
  PG_CONCAT,
  PG_INDEX,
  PG_ROW_COLUMNS,
  PG_ROWS,
  pgRowParams,
  type LogStream,
  type LogRow,
  type StoredKey,
} from "./chunk-log.js";

/**
 * PostgreSQL: one statement that writes the streams' rows as packs, as the log's compaction makes them (chunk-log.ts
 * `packs`), leaving out the numbers stored before (in the log or in a pack) and answering them, as the log's append
 * does. The caller holds the measurements' locks, so what this statement sees stored is all that is (every writer
 * of a measurement's chunks takes its lock, and READ COMMITTED reads what committed before the statement).
 */
export function appendPacksPg(q: Queryable, streams: readonly LogStream[], createdAtMs: number): Promise<StoredKey[]> {
  if (!streams.some((s) => s.rows.length > 0)) return Promise.resolve([]);
  return q.all<StoredKey>(
    `WITH v AS (${PG_ROWS}),
       fresh AS (SELECT * FROM (SELECT ${PG_ROW_COLUMNS} FROM v
           WHERE NOT EXISTS (SELECT 1 FROM meas_chunk_log l WHERE l.sequence_id = v.s AND l.sequence_number = v.n) AND ${NOT_PACKED})
         AS f(measurement_uuid, sequence_id, sequence_number, data_points, min_elapsed_ns, max_elapsed_ns, created_at_ms, payload, file_offset, file_length)),
       ${packsOf("fresh", PG_CONCAT, PG_INDEX)},
       chunks AS (INSERT INTO meas_chunks (${CHUNK_COLUMNS}) SELECT ${CHUNK_COLUMNS} FROM packs ORDER BY sequence_id, sequence_number),
       payloads AS (INSERT INTO meas_chunk_payloads (${PAYLOAD_COLUMNS}) SELECT ${PAYLOAD_COLUMNS} FROM packs ORDER BY sequence_id, sequence_number)
     SELECT v.s AS sequence_id, v.n AS sequence_number FROM v
     WHERE NOT EXISTS (SELECT 1 FROM fresh WHERE fresh.sequence_id = v.s AND fresh.sequence_number = v.n)`,
    pgRowParams(q, streams, createdAtMs),
  );
}

/**
 * Writes the streams' rows as packs: per stream, runs of consecutive numbers whose payloads are in their rows, at
 * most PACK_CHUNKS each; a row whose payload is in a file is a pack of one, as the compaction makes them. The
 * caller leaves out numbers stored before (chunk-log.ts `storedInRuns`, in the same transaction); a pack whose
 * first number is stored all the same fails the commit (meas_chunks' key), as the log's key does.
 */
export async function appendPacks(q: Queryable, streams: readonly LogStream[], createdAtMs: number): Promise<number> {
  if (q.dialect !== "sqlite") throw new Error("appendPacks is SQLite's: PostgreSQL's is appendPacksPg");
  const payloads: Buffer[] = [];
  let at = 1;
  let json = "[";
  let packs = 0;
  for (const s of streams) {
    if (s.rows.length === 0) continue;
    const rows = ascending(s.rows);
    let list = "";
    for (let i = 0; i < rows.length; ) {
      const j = runEnd(rows, i);
      const bytes = payloadOf(rows, i, j, payloads);
      list += `${list === "" ? "" : ","}${packJson(rows, i, j, at, bytes, createdAtMs)}`;
      at += bytes;
      packs++;
      i = j;
    }
    json += `${json === "[" ? "" : ","}[${JSON.stringify(s.measUuid)},${s.sequenceId},[${list}]]`;
  }
  if (packs === 0) return 0;
  const param = `${json}]`;
  const from = "FROM json_each(?) AS s, json_each(s.value, '$[2]') AS p";
  // One after the other: a payload row's key refers to its chunk row, and two statements given at once may run in
  // either order (each is prepared, then run, on SQLite's threads).
  const chunks = await q.run(
    `INSERT INTO meas_chunks (measurement_uuid, sequence_id, sequence_number, last_number, data_points, min_elapsed_ns, max_elapsed_ns, created_at_ms)
     SELECT s.value->>0, s.value->>1, p.value->>0, p.value->>1, p.value->>2, p.value->>3, p.value->>4, ? ${from}`,
    [createdAtMs, param],
  );
  await q.run(
    `INSERT INTO meas_chunk_payloads (sequence_id, sequence_number, payload, file_offset, file_length, chunk_index)
     SELECT s.value->>1, p.value->>0, ifnull(substr(?, p.value->>5, p.value->>6), x''), p.value->>7, p.value->>8, p.value->>9 ${from}`,
    [Buffer.concat(payloads), param],
  );
  if (chunks.changes !== packs) throw new Error(`chunk packs: ${chunks.changes} of ${packs} written`);
  return packs;
}

/** The rows in number order (a stream's rows usually are already). */
function ascending(rows: readonly LogRow[]): readonly LogRow[] {
  for (let i = 1; i < rows.length; i++)
    if (rows[i]!.sequenceNumber < rows[i - 1]!.sequenceNumber)
      return [...rows].sort((a, b) => a.sequenceNumber - b.sequenceNumber);
  return rows;
}

const inRow = (r: LogRow) => r.fileLength === null;

/** The end (exclusive) of the pack that starts at row `i`. */
function runEnd(rows: readonly LogRow[], i: number): number {
  let j = i + 1;
  if (!inRow(rows[i]!)) return j;
  while (
    j < rows.length &&
    j - i < PACK_CHUNKS &&
    inRow(rows[j]!) &&
    rows[j]!.sequenceNumber === rows[j - 1]!.sequenceNumber + 1
  )
    j++;
  return j;
}

/** Adds the pack's payloads (rows i..j) to `payloads`; their length. */
function payloadOf(rows: readonly LogRow[], i: number, j: number, payloads: Buffer[]): number {
  let bytes = 0;
  for (let k = i; k < j; k++) {
    const p = rows[k]!.payload;
    if (p.length === 0) continue;
    payloads.push(p);
    bytes += p.length;
  }
  return bytes;
}

/**
 * A pack as [first, last or null, data points, min elapsed, max elapsed, payload at, payload length, file offset,
 * file length, chunk index or null]: the columns the compaction gives a pack (chunk-log.ts `packs`).
 */
function packJson(rows: readonly LogRow[], i: number, j: number, at: number, bytes: number, createdAtMs: number) {
  const first = rows[i]!;
  if (j - i === 1)
    return `[${first.sequenceNumber},null,${first.dataPoints},${first.minElapsedNs},${first.maxElapsedNs},${at},${bytes},${first.fileOffset},${first.fileLength},null]`;
  let points = 0;
  let min = first.minElapsedNs;
  let max = first.maxElapsedNs;
  let index = "";
  for (let k = i; k < j; k++) {
    const r = rows[k]!;
    points += r.dataPoints;
    if (r.minElapsedNs < min) min = r.minElapsedNs;
    if (r.maxElapsedNs > max) max = r.maxElapsedNs;
    index += `${k === i ? "" : ","}[${r.dataPoints},${r.minElapsedNs},${r.maxElapsedNs},${createdAtMs},${r.payload.length}]`;
  }
  return `[${first.sequenceNumber},${rows[j - 1]!.sequenceNumber},${points},${min},${max},${at},${bytes},null,null,[${index}]]`;
}
