// SQL of a commit that writes its chunks as packs (migration 405) at once, without the chunk log: the ingest
// journal's apply (ingest/ingest-journal.ts) brings each stream's chunks of a quarter of a second or more
// together, so they are packed as they are written, and no log row is inserted, compacted and deleted for them.
// SQLite only (the journal is); two statements whatever the number of streams and chunks.
import type { Queryable } from "../../database/db.js";
import { PACK_CHUNKS, type LogStream, type LogRow } from "./chunk-log.js";

/**
 * Writes the streams' rows as packs: per stream, runs of consecutive numbers whose payloads are in their rows, at
 * most PACK_CHUNKS each; a row whose payload is in a file is a pack of one, as the compaction makes them. The
 * caller leaves out numbers stored before (chunk-log.ts `storedInRuns`, in the same transaction); a pack whose
 * first number is stored all the same fails the commit (meas_chunks' key), as the log's key does.
 */
export async function appendPacks(q: Queryable, streams: readonly LogStream[], createdAtMs: number): Promise<number> {
  if (q.dialect !== "sqlite") throw new Error("chunk packs are written at commit on SQLite only");
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
