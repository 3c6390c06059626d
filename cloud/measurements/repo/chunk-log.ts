// SQL of the chunk log (migration 404): the shared group commit appends every stream's chunks to
// meas_chunk_log in commit order, and a compaction moves them into meas_chunks and meas_chunk_payloads, sorted
// by key, a fraction of a second later, a stream's consecutive chunks as one pack (migration 405). A commit then
// writes the log's last pages and a few pages of its small unique index, whatever the number of streams; a
// compaction writes one entry in each of meas_chunks' indexes per pack, not per chunk. Readers (data.ts,
// sequences.ts) read the log beside the tables and a pack's chunks from its index.
import type { Queryable, SqlParam } from "../../database/db.js";
import { rowsParam } from "./chunk-batch.js";

export interface LogRow {
  sequenceNumber: number;
  dataPoints: number;
  minElapsedNs: number;
  maxElapsedNs: number;
  /** The bytes in the row (empty when they are in the sequence's payload file). */
  payload: Buffer;
  fileOffset: number | null;
  fileLength: number | null;
}

/** The rows of one stream in a commit: one measurement and sequence, numbers not repeated. */
export interface LogStream {
  measUuid: string;
  sequenceId: number;
  rows: readonly LogRow[];
}

/** A key already stored (in the log or in meas_chunks) that an append left as it was. */
export type StoredKey = { sequence_id: number; sequence_number: number };

/**
 * SQL: the first number of the meas_chunks row that may hold number `n` of sequence `seq` (the last row keyed at
 * or before it: a pack holds consecutive numbers and no number is in two rows); NULL when none is.
 */
export const packStart = (seq: string, n: string) =>
  `(SELECT b.sequence_number FROM meas_chunks b WHERE b.sequence_id = ${seq} AND b.sequence_number <= ${n} ORDER BY b.sequence_number DESC LIMIT 1)`;

const COLUMNS =
  "measurement_uuid, sequence_id, sequence_number, data_points, min_elapsed_ns, max_elapsed_ns, created_at_ms, payload, file_offset, file_length";

/**
 * Appends the log rows of a commit. SQLite: every row given is appended; the caller leaves out what
 * storedInRuns found stored in the same transaction (SQLite has one writer, so nothing is stored between the
 * two), and the log's unique index refuses the commit if one was stored all the same. The rows travel as one JSON
 * parameter (a stream's measurement and sequence once, then its chunks' columns) and their payloads as one blob
 * that each row cuts its bytes from; the answer holds no row per chunk, so a commit's rows cost the main thread no
 * result objects. PostgreSQL: one statement, an array per column, that skips the keys stored before (in the log or
 * in meas_chunks) and answers them (usually none).
 */
export async function appendLogRows(
  q: Queryable,
  streams: readonly LogStream[],
  createdAtMs: number,
): Promise<StoredKey[]> {
  if (!streams.some((s) => s.rows.length > 0)) return [];
  if (q.dialect === "postgres") return appendPg(q, streams, createdAtMs);
  const payloads: Buffer[] = [];
  let at = 1;
  let json = "[";
  let n = 0;
  for (const s of streams) {
    let rows = "";
    for (const r of s.rows) {
      const len = r.payload.length;
      rows += `${rows === "" ? "" : ","}[${r.sequenceNumber},${r.dataPoints},${r.minElapsedNs},${r.maxElapsedNs},${at},${len},${r.fileOffset},${r.fileLength}]`;
      if (len > 0) payloads.push(r.payload);
      at += len;
      n++;
    }
    if (rows !== "") json += `${json === "[" ? "" : ","}[${JSON.stringify(s.measUuid)},${s.sequenceId},[${rows}]]`;
  }
  const { changes } = await q.run(
    `INSERT INTO meas_chunk_log (${COLUMNS})
     SELECT s.value->>0, s.value->>1, c.value->>0, c.value->>1, c.value->>2, c.value->>3, ?,
       ifnull(substr(?, c.value->>4, c.value->>5), x''), c.value->>6, c.value->>7
     FROM json_each(?) AS s, json_each(s.value, '$[2]') AS c`,
    [createdAtMs, Buffer.concat(payloads), `${json}]`],
  );
  if (changes !== n) throw new Error(`chunk log: ${changes} of ${n} rows appended`);
  return [];
}

/** One stream's numbers in a commit, named by measurement and stream (its sequence may not exist yet). */
export interface StreamNumbers {
  measUuid: string;
  streamUuid: string;
  numbers: readonly number[];
}

/**
 * SQLite, one SELECT whatever the streams: which of the streams' numbers are stored, in the log or in
 * meas_chunks, keyed `<measurement uuid> <stream uuid>`. A stream sends consecutive numbers, so each stream is
 * usually one range, looked up through the log's key and meas_chunks' key; a stream whose sequence does not exist
 * has nothing stored. A plain SELECT, so a commit runs it beside its BEGIN (TxOptions.earlyReads).
 */
export async function storedInRuns(q: Queryable, streams: readonly StreamNumbers[]): Promise<Map<string, Set<number>>> {
  const stored = new Map<string, Set<number>>();
  const runs = runsJson(streams);
  if (runs === "[]") return stored;
  const seq = `(SELECT s.id AS seq, s.measurement_uuid AS m, s.uuid AS u, r.value->>2 AS lo, r.value->>3 AS hi
     FROM json_each(?1) AS r JOIN meas_sequences s ON s.measurement_uuid = r.value->>0 AND s.uuid = r.value->>1)`;
  const rows = await q.all<{ m: string; u: string; lo: number; hi: number }>(
    `SELECT r.m, r.u, c.sequence_number AS lo, c.sequence_number AS hi FROM ${seq} AS r
       JOIN meas_chunk_log c ON c.sequence_id = r.seq AND c.sequence_number BETWEEN r.lo AND r.hi
     UNION ALL
     SELECT r.m, r.u, max(c.sequence_number, r.lo), min(ifnull(c.last_number, c.sequence_number), r.hi) FROM ${seq} AS r
       JOIN meas_chunks c ON c.sequence_id = r.seq
         AND c.sequence_number BETWEEN ifnull(${packStart("r.seq", "r.lo")}, r.lo) AND r.hi
         AND ifnull(c.last_number, c.sequence_number) >= r.lo`,
    [runs],
  );
  for (const r of rows) {
    const key = `${r.m} ${r.u}`;
    const set = stored.get(key) ?? stored.set(key, new Set()).get(key)!;
    for (let n = Number(r.lo); n <= Number(r.hi); n++) set.add(n);
  }
  return stored;
}

/** Per stream, its runs of consecutive numbers as [measurement uuid, stream uuid, first, last] (JSON). */
function runsJson(streams: readonly StreamNumbers[]): string {
  let json = "[";
  const add = (s: StreamNumbers, first: number, last: number) =>
    (json += `${json === "[" ? "" : ","}[${JSON.stringify(s.measUuid)},${JSON.stringify(s.streamUuid)},${first},${last}]`);
  for (const s of streams) {
    let first = -1;
    let last = -2;
    for (const k of s.numbers) {
      if (k === last + 1) {
        last = k;
        continue;
      }
      if (first >= 0) add(s, first, last);
      first = last = k;
    }
    if (first >= 0) add(s, first, last);
  }
  return `${json}]`;
}

/**
 * PostgreSQL: the rows of a commit as parameters, an array per column for `PG_ROWS` then the commit's time and the
 * payloads as one bytea (sent as binary) that each row cuts its bytes from, not as an array of escaped values.
 */
export function pgRowParams(q: Queryable, streams: readonly LogStream[], createdAtMs: number): SqlParam[] {
  const values: unknown[][] = [];
  const payloads: Buffer[] = [];
  let at = 1;
  for (const s of streams)
    for (const r of s.rows) {
      const len = r.payload.length;
      values.push([
        s.measUuid,
        s.sequenceId,
        r.sequenceNumber,
        r.dataPoints,
        r.minElapsedNs,
        r.maxElapsedNs,
        at,
        len,
        r.fileOffset,
        r.fileLength,
      ]);
      if (len > 0) payloads.push(r.payload);
      at += len;
    }
  return [...rowsParam(q, values, 10), createdAtMs, Buffer.concat(payloads)];
}

/** PostgreSQL: the rows of `pgRowParams` as a table `v`. */
export const PG_ROWS = `SELECT * FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::int[], ?::int[], ?::bigint[], ?::bigint[])
  AS v(m, s, n, d, lo, hi, at, len, fo, fl)`;

/** PostgreSQL: the columns of a log row made of a row of `v` (the two parameters after the arrays). */
export const PG_ROW_COLUMNS = "m, s, n, d, lo, hi, ?::bigint, substring(?::bytea FROM at FOR len), fo, fl";

/** SQL: no pack of meas_chunks holds number `v.n` of sequence `v.s`. */
export const NOT_PACKED = `NOT EXISTS (SELECT 1 FROM meas_chunks c WHERE c.sequence_id = v.s AND c.sequence_number = ${packStart("v.s", "v.n")}
  AND COALESCE(c.last_number, c.sequence_number) >= v.n)`;

/** PostgreSQL: one statement; a data-modifying CTE inserts, and the answer is the keys it did not insert. */
function appendPg(q: Queryable, streams: readonly LogStream[], createdAtMs: number) {
  return q.all<StoredKey>(
    `WITH v AS (${PG_ROWS}),
       ins AS (INSERT INTO meas_chunk_log (${COLUMNS})
         SELECT ${PG_ROW_COLUMNS} FROM v WHERE ${NOT_PACKED}
         ON CONFLICT DO NOTHING RETURNING sequence_id, sequence_number)
     SELECT v.s AS sequence_id, v.n AS sequence_number FROM v
     WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins.sequence_id = v.s AND ins.sequence_number = v.n)`,
    pgRowParams(q, streams, createdAtMs),
  );
}

export const CHUNK_COLUMNS =
  "measurement_uuid, sequence_id, sequence_number, last_number, data_points, min_elapsed_ns, max_elapsed_ns, created_at_ms";
export const PAYLOAD_COLUMNS = "sequence_id, sequence_number, payload, file_offset, file_length, chunk_index";
/** A pack holds at most this many chunks (a large compaction after a restart makes packs of a bounded size). */
export const PACK_CHUNKS = 256;

/**
 * The log rows (`from`) grouped into packs (migration 405): per sequence, runs of consecutive numbers whose payloads
 * are in their rows, at most PACK_CHUNKS each; a row whose payload is in a file stays a pack of one. Columns as
 * CHUNK_COLUMNS and PAYLOAD_COLUMNS; `concat` and `index` are the dialect's aggregates of the payloads and of the
 * chunks' index entries, in number order.
 */
export const packs = (from: string, concat: string, index: string) => `
  runs AS (SELECT *, sequence_number - row_number() OVER w AS run, sum(CASE WHEN file_length IS NULL THEN 0 ELSE 1 END) OVER w AS files,
      CASE WHEN file_length IS NULL THEN -1 ELSE sequence_number END AS single, (row_number() OVER w - 1) / ${PACK_CHUNKS} AS part
    FROM ${from} WINDOW w AS (PARTITION BY sequence_id ORDER BY sequence_number ROWS UNBOUNDED PRECEDING)),
  packs AS (SELECT min(measurement_uuid) AS measurement_uuid, sequence_id, min(sequence_number) AS sequence_number,
      CASE WHEN count(*) > 1 THEN max(sequence_number) END AS last_number, sum(data_points) AS data_points,
      min(min_elapsed_ns) AS min_elapsed_ns, max(max_elapsed_ns) AS max_elapsed_ns, min(created_at_ms) AS created_at_ms,
      ${concat} AS payload, max(file_offset) AS file_offset, max(file_length) AS file_length,
      CASE WHEN count(*) > 1 THEN ${index} END AS chunk_index
    FROM runs GROUP BY sequence_id, run, files, single, part)`;
const ENTRY = "data_points, min_elapsed_ns, max_elapsed_ns, created_at_ms, length(payload)";
/** PostgreSQL's aggregates of a pack's payloads and of its chunks' index entries (`packs`). */
export const PG_CONCAT = "string_agg(payload, ''::bytea ORDER BY sequence_number)";
export const PG_INDEX = `json_agg(json_build_array(${ENTRY}) ORDER BY sequence_number)::text`;

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
  if (q.dialect === "postgres") {
    let only = part === undefined ? "" : "sequenceId" in part ? " WHERE sequence_id = ?" : " WHERE sequence_id % ? = ?";
    const args: SqlParam[] = part === undefined ? [] : "sequenceId" in part ? [part.sequenceId] : [part.of, part.slice];
    if (part !== undefined && "measurements" in part) {
      only += " AND measurement_uuid = ANY(?::text[])";
      args.push(part.measurements as unknown as SqlParam);
    }
    const pg = packs("moved", PG_CONCAT, PG_INDEX);
    const [r] = await q.all<{ n: number }>(
      `WITH moved AS (DELETE FROM meas_chunk_log${only} RETURNING *),${pg},
         chunks AS (INSERT INTO meas_chunks (${CHUNK_COLUMNS}) SELECT ${CHUNK_COLUMNS} FROM packs ORDER BY sequence_id, sequence_number
           ON CONFLICT DO NOTHING),
         payloads AS (INSERT INTO meas_chunk_payloads (${PAYLOAD_COLUMNS}) SELECT ${PAYLOAD_COLUMNS} FROM packs ORDER BY sequence_id, sequence_number
           ON CONFLICT DO NOTHING)
       SELECT COUNT(*) AS n FROM moved`,
      args,
    );
    return Number(r?.n ?? 0);
  }
  // SQLite: inside the caller's transaction, and SQLite has one writer, so nothing is appended meanwhile. The
  // packs are made once, into a temporary table of the connection (a row per pack), and copied into both tables
  // from there. The payloads are joined as text (group_concat keeps a blob's bytes) and cast back. All but the
  // last statement go as one script (one wait for SQLite's thread, not four: commits wait behind a compaction),
  // so the part is written in as integers.
  const where = sqliteWhere(part);
  const sqlite = packs(
    `(SELECT * FROM meas_chunk_log${where})`,
    "CAST(group_concat(payload, x'' ORDER BY sequence_number) AS BLOB)",
    `json_group_array(json_array(${ENTRY}) ORDER BY sequence_number)`,
  );
  const all = `${CHUNK_COLUMNS}, payload, file_offset, file_length, chunk_index`;
  await q.exec(
    `CREATE TEMP TABLE IF NOT EXISTS meas_packs (${all});
     WITH${sqlite} INSERT INTO temp.meas_packs (${all}) SELECT ${all} FROM packs ORDER BY sequence_id, sequence_number;
     INSERT OR IGNORE INTO meas_chunks (${CHUNK_COLUMNS}) SELECT ${CHUNK_COLUMNS} FROM temp.meas_packs ORDER BY rowid;
     INSERT OR IGNORE INTO meas_chunk_payloads (${PAYLOAD_COLUMNS}) SELECT ${PAYLOAD_COLUMNS} FROM temp.meas_packs ORDER BY rowid;
     DELETE FROM temp.meas_packs;`,
  );
  return (await q.run(`DELETE FROM meas_chunk_log${where}`)).changes;
}

/** The WHERE clause of a part of the log with its numbers written in (checked to be integers). */
function sqliteWhere(part: LogPart): string {
  const int = (n: number) => {
    if (!Number.isSafeInteger(n)) throw new Error(`chunk log: ${n} is not an integer`);
    return n;
  };
  if (part === undefined) return "";
  if ("sequenceId" in part) return ` WHERE sequence_id = ${int(part.sequenceId)}`;
  return ` WHERE sequence_id % ${int(part.of)} = ${int(part.slice)}`;
}
