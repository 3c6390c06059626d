// A steady stream's chunk transaction as one script (Db.script): one thread-pool round trip instead of one
// per statement, which is most of a small chunk's time to commit. It is planned only from rows known from
// earlier commits (the measurement row, its sequences, listed data ids), and written to fail, and roll back,
// whenever what it assumes does not hold:
// - a chunk number already stored: the chunk table's primary key;
// - a sequence gone (its measurement deleted): the chunk table's foreign key;
// - the measurement deleted, made again, ended, completed or moved to another project or edge: the guard
//   row's CHECK, which sees whether the measurement's update found the row as planned.
// The caller then runs the parameter-bound transaction, which reads what is there and answers as always.
import type { Chunk } from "../formats/codec.js";
import { chunkRows, tally, type ChunkRow } from "../storage/chunk-write.js";
import type { Known } from "../ingest/known-rows.js";
import type { PayloadFiles } from "../storage/payload-files.js";
import { CHUNK_COLUMNS, chunkValues, fileLargePayloads, PAYLOAD_COLUMNS, payloadValues, type ChunkRowInput } from "./sequences.js";
import type { RawChunk } from "../formats/raw-chunk.js";
import { sqlLiteral as lit, sqlRows } from "../../storage/sql-literal.js";

/** A measurement row as the stream last committed to it, while neither ended nor completed. */
export interface KnownMeasurement {
  createdAt: string;
  projectUuid: string;
  edgeUuid: string;
}

export interface ScriptGroup {
  measUuid: string;
  measurement: KnownMeasurement;
  seqId: number;
  known: Known;
  chunks: ReadonlyArray<Chunk | RawChunk>;
}

export interface ChunkScript {
  statements: string[];
  /** The payload files' writes; all must have resolved before the script runs. */
  synced: Array<Promise<void>>;
  /** Per group: the data ids its chunks carry, known to exist once the script committed. */
  dataIds: string[][];
}

const ROWS_PER_STATEMENT = 100;
const GUARD = "temp.chunk_script_guard";

function inParts<T>(items: readonly T[], each: (part: readonly T[]) => string): string[] {
  const out: string[] = [];
  for (let i = 0; i < items.length; i += ROWS_PER_STATEMENT) out.push(each(items.slice(i, i + ROWS_PER_STATEMENT)));
  return out;
}

/**
 * The script for these groups, or undefined when a group repeats a chunk number (only the parameter-bound
 * path reports repeats). Throws NoLiteral for a value without a literal, before any payload is written.
 * `alloc` as writeChunks'; the payloads are read until every `synced` has settled.
 */
export async function chunkScript(
  files: PayloadFiles,
  groups: readonly ScriptGroup[],
  now: string,
  alloc?: (n: number) => Buffer,
): Promise<ChunkScript | undefined> {
  const createdAtMs = Date.parse(now);
  const planned: Array<{ g: ScriptGroup; rows: ChunkRow[] }> = [];
  for (const g of groups) {
    const { rows } = chunkRows(g.measUuid, g.seqId, g.chunks, createdAtMs, alloc);
    if (rows.length !== g.chunks.length) return undefined;
    planned.push({ g, rows });
  }
  const statements = [`CREATE TEMP TABLE IF NOT EXISTS ${GUARD} (ok INTEGER NOT NULL CHECK (ok))`];
  const dataIds: string[][] = [];
  for (const { g, rows } of planned) {
    const t = tally(rows, g.known);
    dataIds.push([...t.dataIds]);
    const m = g.measurement;
    statements.push(
      ...inParts(rows, (part) => `INSERT INTO meas_chunks ${CHUNK_COLUMNS} VALUES ${sqlRows(part.map(chunkValues))}`),
      ...inParts(t.newIds, (part) => `INSERT OR IGNORE INTO meas_data_ids (measurement_uuid, data_type, data_name) VALUES ${sqlRows(part.map((d) => [g.measUuid, d.type, d.name]))}`),
      `UPDATE meas_sequences SET received_data_points = received_data_points + ${lit(t.points)},
         received_chunks_count = received_chunks_count + ${lit(rows.length)}, updated_at = ${lit(now)} WHERE id = ${lit(g.seqId)}`,
      // As refreshStatus for chunks stored while measuring; the guard fails unless this found the row as planned.
      `UPDATE meas_measurements SET max_elapsed_ns = ${Number.isFinite(t.maxElapsed) ? `MAX(max_elapsed_ns, ${lit(t.maxElapsed)})` : "max_elapsed_ns"},
         status = 'measuring', completed = 0, updated_at = ${lit(now)}
       WHERE uuid = ${lit(g.measUuid)} AND created_at = ${lit(m.createdAt)} AND project_uuid = ${lit(m.projectUuid)}
         AND edge_uuid = ${lit(m.edgeUuid)} AND ended = 0 AND completed = 0`,
      `INSERT INTO ${GUARD} (ok) VALUES (changes() = 1)`,
    );
  }
  statements.push(`DELETE FROM ${GUARD}`);
  // Every literal is written: now the payload files (bytes of a script that does not commit stay unreferenced).
  const at = new Map<ChunkRowInput, number>();
  const synced: Array<Promise<void>> = [];
  try {
    for (const { rows } of planned) {
      const filed = await fileLargePayloads(files, rows);
      for (const [r, o] of filed.at) at.set(r, o);
      if (filed.synced) synced.push(filed.synced);
    }
  } catch (e) {
    await Promise.allSettled(synced); // nothing still writing once this throws
    throw e;
  }
  const payloadRows = planned.flatMap(({ rows }) => rows);
  statements.push(...inParts(payloadRows, (part) => `INSERT INTO meas_chunk_payloads ${PAYLOAD_COLUMNS} VALUES ${sqlRows(part.map((r) => payloadValues(r, at.get(r))))}`));
  return { statements, synced, dataIds };
}
