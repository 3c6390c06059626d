// SQL for the data endpoint: a measurement's chunk rows in time order, one page at a time
// (keyset paging over the meas_chunks_asc / meas_chunks_desc indexes).
import type { Queryable, SqlParam } from "../../storage/db.js";

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
}

export function chunkPage(q: Queryable, p: ChunkPageQuery): Promise<ChunkRow[]> {
  const where = ["c.measurement_uuid = ?"];
  const args: SqlParam[] = [p.measUuid];
  const lead = p.desc ? "c.max_elapsed_ns" : "c.min_elapsed_ns";
  if (p.after)
    where.push(`(${lead}, c.sequence_id, c.sequence_number) ${p.desc ? "<" : ">"} (?, ?, ?)`), args.push(...p.after);
  if (p.from !== undefined) where.push("c.max_elapsed_ns >= ?"), args.push(p.from);
  if (p.to !== undefined) where.push("c.min_elapsed_ns < ?"), args.push(p.to);
  const dir = p.desc ? "DESC" : "ASC";
  return q.all<ChunkRow>(
    `SELECT c.sequence_id, c.sequence_number, c.min_elapsed_ns, c.max_elapsed_ns, p.payload, p.file_offset, p.file_length, c.created_at_ms
     FROM meas_chunks c JOIN meas_chunk_payloads p ON p.sequence_id = c.sequence_id AND p.sequence_number = c.sequence_number
     WHERE ${where.join(" AND ")} ORDER BY ${lead} ${dir}, c.sequence_id ${dir}, c.sequence_number ${dir} LIMIT ?`,
    [...args, p.limit],
  );
}
