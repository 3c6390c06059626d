// SQL for sequences and their chunks. A chunk row is keyed by (sequence, sequence_number): a
// second insert of the same key is ignored, which is what makes uploads idempotent.
import type { Queryable, SqlParam } from "../storage/db.js";
import type { SequenceRow } from "./model.js";

export const listSequences = (q: Queryable, measUuid: string) =>
  q.all<SequenceRow>("SELECT * FROM meas_sequences WHERE measurement_uuid = ? ORDER BY created_at, id", [measUuid]);

export const findSequence = (q: Queryable, measUuid: string, uuid: string) =>
  q.get<SequenceRow>("SELECT * FROM meas_sequences WHERE measurement_uuid = ? AND uuid = ?", [measUuid, uuid]);

export async function ensureSequence(q: Queryable, measUuid: string, uuid: string, now: string): Promise<SequenceRow> {
  await q.run("INSERT OR IGNORE INTO meas_sequences (measurement_uuid, uuid, created_at, updated_at) VALUES (?, ?, ?, ?)", [
    measUuid,
    uuid,
    now,
    now,
  ]);
  return (await findSequence(q, measUuid, uuid))!;
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
    if (e[key] !== undefined) (sets.push(`${key} = ?`), args.push(e[key]));
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

/** true when stored, false when that sequence number was already there. */
export async function insertChunk(q: Queryable, c: ChunkRowInput): Promise<boolean> {
  const r = await q.run(
    `INSERT OR IGNORE INTO meas_chunks
       (measurement_uuid, sequence_id, sequence_number, data_points, min_elapsed_ns, max_elapsed_ns, payload, created_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [c.measUuid, c.sequenceId, c.sequenceNumber, c.dataPoints, c.minElapsedNs, c.maxElapsedNs, c.payload, c.createdAtMs],
  );
  return r.changes === 1;
}

export const addReceived = (q: Queryable, sequenceId: number, points: number, chunks: number, now: string) =>
  q.run(
    `UPDATE meas_sequences SET received_data_points = received_data_points + ?, received_chunks_count = received_chunks_count + ?,
       updated_at = ? WHERE id = ?`,
    [points, chunks, now, sequenceId],
  );
