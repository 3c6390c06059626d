// SQL for the data endpoint: a measurement's chunk rows in time order, one page at a time
// (keyset paging over the meas_chunks_asc / meas_chunks_desc indexes), with the rows still in the chunk log. A
// row is a pack of consecutive chunks (migration 405) ordered by its earliest (latest) point: chunksOf gives its
// chunks. A page also gives again the packs that now hold chunks the read took from the log before (a compaction
// ran meanwhile): service/chunk-pages.ts keeps those runs and takes from such a pack what it has not read.
import type { Queryable, SqlParam } from "../../database/db.js";
import { rowsParam } from "./chunk-batch.js";
import { packStart } from "./chunk-log.js";

export interface ChunkRow {
  sequence_id: number;
  sequence_number: number;
  min_elapsed_ns: number;
  max_elapsed_ns: number;
  /** The payload itself for rows written before payload files (migration 403), else empty. */
  payload: Buffer;
  /** Where the payload is in its sequence's file (payload-files.ts); null for a payload held in the row. */
  file_offset: number | null;
  file_length: number | null;
  created_at_ms: number;
  /** A pack's last number (its first is sequence_number); null for a row of one chunk. */
  last_number: number | null;
  /** A pack's chunks as JSON: [data points, min elapsed, max elapsed, created at ms, payload length] each. */
  chunk_index: string | null;
  /** 1 for a row of the chunk log, else 0. */
  in_log: number;
  /** 1 for a pack given because it holds chunks of ChunkPageQuery.readFromLog (ahead of the page's rows), else 0. */
  repacked: number;
}

type IndexEntry = [number, number, number, number, number];

/** The chunks of a row: the row itself, or those of its pack, their payloads cut from the pack's. */
export function chunksOf(row: ChunkRow): ChunkRow[] {
  if (row.chunk_index === null) return [row];
  const entries = JSON.parse(row.chunk_index) as IndexEntry[];
  let at = 0;
  return entries.map(([, min, max, created, length], i) => {
    const payload = row.payload.subarray(at, at + length);
    at += length;
    return {
      sequence_id: row.sequence_id,
      sequence_number: row.sequence_number + i,
      min_elapsed_ns: min,
      max_elapsed_ns: max,
      payload,
      file_offset: null,
      file_length: null,
      created_at_ms: created,
      last_number: null,
      chunk_index: null,
      in_log: 0,
      repacked: 0,
    };
  });
}

/** Position after the last row read: (min or max elapsed, sequence id, sequence number). */
export type ChunkKey = [number, number, number];

export interface ChunkPageQuery {
  measUuid: string;
  desc: boolean;
  after?: ChunkKey;
  /** Elapsed-time window [from, to) relative to the measurement's base time, in ns. */
  from?: number;
  to?: number;
  limit: number;
  /**
   * Chunks the read took from the chunk log in earlier pages, as runs [sequence id, first number, last number]:
   * the rows of meas_chunks now holding any of them come first in the answer, marked `repacked`.
   */
  readFromLog?: ReadonlyArray<readonly [number, number, number]>;
}

export function chunkPage(q: Queryable, p: ChunkPageQuery): Promise<ChunkRow[]> {
  const dir = p.desc ? "DESC" : "ASC";
  const lead = p.desc ? "max_elapsed_ns" : "min_elapsed_ns";
  /** The page's conditions on a table aliased `c`, and their arguments. */
  const conditions = (head: string, headArgs: SqlParam[]) => {
    const where = [head];
    const args = [...headArgs];
    if (p.after)
      where.push(`(c.${lead}, c.sequence_id, c.sequence_number) ${p.desc ? "<" : ">"} (?, ?, ?)`),
        args.push(...p.after);
    if (p.from !== undefined) where.push("c.max_elapsed_ns >= ?"), args.push(p.from);
    if (p.to !== undefined) where.push("c.min_elapsed_ns < ?"), args.push(p.to);
    return { where: where.join(" AND "), args };
  };
  const order = `ORDER BY ${lead} ${dir}, sequence_id ${dir}, sequence_number ${dir} LIMIT ?`;
  const stored = conditions("c.measurement_uuid = ?", [p.measUuid]);
  // Rows still in the chunk log (chunk-log.ts) are read beside the stored ones, through the log's key index.
  const logged = conditions("c.sequence_id IN (SELECT id FROM meas_sequences WHERE measurement_uuid = ?)", [
    p.measUuid,
  ]);
  const columns = (log: number, repacked: number) =>
    `c.sequence_id, c.sequence_number, c.min_elapsed_ns, c.max_elapsed_ns, ${log ? "c" : "p"}.payload, ${log ? "c" : "p"}.file_offset, ${log ? "c" : "p"}.file_length, c.created_at_ms,
       ${log ? "CAST(NULL AS INTEGER) AS last_number, CAST(NULL AS TEXT) AS chunk_index" : "c.last_number, p.chunk_index"}, ${log} AS in_log, ${repacked} AS repacked`;
  const payloads =
    "JOIN meas_chunk_payloads p ON p.sequence_id = c.sequence_id AND p.sequence_number = c.sequence_number";
  const page = `SELECT * FROM (SELECT ${columns(0, 0)}
       FROM meas_chunks c ${payloads}
       WHERE ${stored.where} ORDER BY c.${lead} ${dir}, c.sequence_id ${dir}, c.sequence_number ${dir} LIMIT ?) AS s
     UNION ALL
     SELECT * FROM (SELECT ${columns(1, 0)}
       FROM meas_chunk_log c WHERE ${logged.where} ORDER BY c.${lead} ${dir}, c.sequence_id ${dir}, c.sequence_number ${dir} LIMIT ?) AS l
     ${order}`;
  const args = [...stored.args, p.limit, ...logged.args, p.limit, p.limit];
  if (!p.readFromLog?.length) return q.all<ChunkRow>(page, args);
  // The rows holding a number of a run: the one holding its first number (or the last before it), and those keyed
  // inside it; a sequence's rows never overlap and each holds consecutive numbers (chunk-log.ts).
  const runs =
    q.dialect === "postgres"
      ? "unnest(?::bigint[], ?::bigint[], ?::bigint[]) AS r(s, lo, hi)"
      : "(SELECT value->>0 AS s, value->>1 AS lo, value->>2 AS hi FROM json_each(?)) AS r";
  return q.all<ChunkRow>(
    `SELECT * FROM (${page}) AS page
     UNION ALL
     SELECT ${columns(0, 1)}
       FROM ${runs} JOIN meas_chunks c ON c.sequence_id = r.s
         AND c.sequence_number BETWEEN COALESCE(${packStart("r.s", "r.lo")}, r.lo) AND r.hi
         AND COALESCE(c.last_number, c.sequence_number) >= r.lo
       ${payloads}
     ORDER BY repacked DESC, ${lead} ${dir}, sequence_id ${dir}, sequence_number ${dir}`,
    [...args, ...rowsParam(q, p.readFromLog, 3)],
  );
}
