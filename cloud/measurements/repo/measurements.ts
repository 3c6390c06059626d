// SQL for measurements and their base times. Every function takes the Queryable to run on, so the
// service can group several of them into one transaction.
import { insertId, type Queryable, type SqlParam } from "../../database/db.js";
import type { BaseTimeRow, MeasRow, MeasTotals, Status } from "../service/model.js";
import { statusOf } from "../service/model.js";

export interface NewMeasurement {
  uuid: string;
  project_uuid: string;
  name: string;
  description: string;
  edge_uuid: string;
  protected: boolean;
  now: string;
}

export async function insertMeasurement(q: Queryable, m: NewMeasurement): Promise<void> {
  await q.run(
    `INSERT INTO meas_measurements (uuid, project_uuid, name, description, edge_uuid, protected, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [m.uuid, m.project_uuid, m.name, m.description, m.edge_uuid, m.protected ? 1 : 0, m.now, m.now],
  );
}

export const findMeasurement = (q: Queryable, uuid: string) =>
  q.get<MeasRow>("SELECT * FROM meas_measurements WHERE uuid = ?", [uuid]);

export interface MeasurementPatch {
  name?: string;
  description?: string;
  protected?: boolean;
  ended?: boolean;
  completed?: boolean;
}

export async function patchMeasurement(q: Queryable, uuid: string, p: MeasurementPatch, now: string): Promise<void> {
  const sets: string[] = ["updated_at = ?"];
  const args: SqlParam[] = [now];
  for (const key of ["name", "description"] as const)
    if (p[key] !== undefined) sets.push(`${key} = ?`), args.push(p[key]!);
  for (const key of ["protected", "ended", "completed"] as const)
    if (p[key] !== undefined) sets.push(`${key} = ?`), args.push(p[key] ? 1 : 0);
  await q.run(`UPDATE meas_measurements SET ${sets.join(", ")} WHERE uuid = ?`, [...args, uuid]);
}

export const touchMeasurement = (q: Queryable, uuid: string, now: string) =>
  q.run("UPDATE meas_measurements SET updated_at = ? WHERE uuid = ?", [now, uuid]);

export const deleteMeasurementRow = (q: Queryable, uuid: string) =>
  q.run("DELETE FROM meas_measurements WHERE uuid = ?", [uuid]);

export const raiseMaxElapsed = (q: Queryable, uuid: string, maxElapsedNs: number, now: string) =>
  q.run("UPDATE meas_measurements SET max_elapsed_ns = MAX(max_elapsed_ns, ?), updated_at = ? WHERE uuid = ?", [
    maxElapsedNs,
    now,
    uuid,
  ]);

const TOTALS = `COUNT(id) AS seq_count,
  COALESCE(SUM(received_data_points), 0) AS recv_points,
  COALESCE(SUM(received_chunks_count), 0) AS recv_chunks,
  SUM(expected_data_points) AS expected_points,
  SUM(final_sequence_number) AS expected_chunks,
  SUM(CASE WHEN final_sequence_number IS NOT NULL THEN MIN(received_chunks_count, final_sequence_number) END) AS counted_chunks,
  COALESCE(SUM(CASE WHEN (expected_data_points IS NOT NULL AND received_data_points >= expected_data_points)
    OR (final_sequence_number IS NOT NULL AND received_chunks_count >= final_sequence_number) THEN 0 ELSE 1 END), 0) AS unsatisfied`;

const EMPTY_TOTALS: MeasTotals = {
  seq_count: 0,
  recv_points: 0,
  recv_chunks: 0,
  expected_points: null,
  expected_chunks: null,
  counted_chunks: null,
  unsatisfied: 0,
};

export async function totalsOf(q: Queryable, uuid: string): Promise<MeasTotals> {
  return (
    (await q.get<MeasTotals>(`SELECT ${TOTALS} FROM meas_sequences WHERE measurement_uuid = ?`, [uuid])) ?? EMPTY_TOTALS
  );
}

export async function totalsOfMany(q: Queryable, uuids: string[]): Promise<Map<string, MeasTotals>> {
  const out = new Map<string, MeasTotals>();
  if (uuids.length === 0) return out;
  const rows = await q.all<MeasTotals & { measurement_uuid: string }>(
    `SELECT measurement_uuid, ${TOTALS} FROM meas_sequences WHERE measurement_uuid IN (${uuids.map(() => "?").join(",")})
     GROUP BY measurement_uuid`,
    uuids,
  );
  for (const r of rows) out.set(r.measurement_uuid, r);
  for (const u of uuids) if (!out.has(u)) out.set(u, EMPTY_TOTALS);
  return out;
}

/**
 * Recomputes the stored status from the sequences; an ended measurement that got everything becomes completed.
 * `read`: the measurement's row as read earlier in the same transaction (its status unchanged since).
 */
export async function refreshStatus(
  q: Queryable,
  uuid: string,
  now: string,
  read?: MeasRow,
  hint?: { chunksStored: boolean },
): Promise<{ before: Status; after: Status } | undefined> {
  const m = read ?? (await findMeasurement(q, uuid));
  if (!m) return undefined;
  // Chunks just stored into a measurement neither ended nor completed: it is measuring (statusOf), no count needed.
  const after = hint?.chunksStored && !m.ended && !m.completed ? "measuring" : statusOf(m, await totalsOf(q, uuid));
  if (after !== m.status) {
    await q.run("UPDATE meas_measurements SET status = ?, completed = ?, updated_at = ? WHERE uuid = ?", [
      after,
      after === "completed" ? 1 : 0,
      now,
      uuid,
    ]);
  }
  return { before: m.status, after };
}

// ---- base times ----

export const listBaseTimes = (q: Queryable, measUuid: string) =>
  q.all<BaseTimeRow>("SELECT * FROM meas_basetimes WHERE measurement_uuid = ? ORDER BY id", [measUuid]);

export const baseTimeById = (q: Queryable, measUuid: string, id: number) =>
  q.get<BaseTimeRow>("SELECT * FROM meas_basetimes WHERE measurement_uuid = ? AND id = ?", [measUuid, id]);

export const baseTimeByType = (q: Queryable, measUuid: string, type: string) =>
  q.get<BaseTimeRow>(
    "SELECT * FROM meas_basetimes WHERE measurement_uuid = ? AND type = ? ORDER BY priority DESC, id DESC LIMIT 1",
    [measUuid, type],
  );

export const baseTimeByName = (q: Queryable, measUuid: string, name: string) =>
  q.get<BaseTimeRow>("SELECT * FROM meas_basetimes WHERE measurement_uuid = ? AND name = ?", [measUuid, name]);

export interface BaseTimeValues {
  type: string;
  name: string;
  priority: number;
  s: number;
  nanos: number;
  elapsedNs: number;
}

export async function insertBaseTime(q: Queryable, measUuid: string, b: BaseTimeValues, now: string): Promise<number> {
  return insertId(
    q,
    `INSERT INTO meas_basetimes (measurement_uuid, type, name, priority, basetime_s, basetime_nanos, elapsed_time_ns, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [measUuid, b.type, b.name, b.priority, b.s, b.nanos, b.elapsedNs, now, now],
  );
}

export const updateBaseTime = (q: Queryable, id: number, b: BaseTimeValues, now: string) =>
  q.run(
    `UPDATE meas_basetimes SET type = ?, name = ?, priority = ?, basetime_s = ?, basetime_nanos = ?, elapsed_time_ns = ?, updated_at = ?
     WHERE id = ?`,
    [b.type, b.name, b.priority, b.s, b.nanos, b.elapsedNs, now, id],
  );

export const deleteBaseTimeRow = (q: Queryable, id: number) => q.run("DELETE FROM meas_basetimes WHERE id = ?", [id]);

/** No base time selected; the time and type stay until refreshBaseTime finds one. */
export const unsetBaseTime = (q: Queryable, measUuid: string) =>
  q.run("UPDATE meas_measurements SET basetime_id = NULL WHERE uuid = ?", [measUuid]);

export async function maxPriority(q: Queryable, measUuid: string): Promise<number> {
  const r = await q.get<{ p: number | null }>(
    "SELECT MAX(priority) AS p FROM meas_basetimes WHERE measurement_uuid = ?",
    [measUuid],
  );
  return r?.p ?? 0;
}

/** Copies the highest-priority base time (latest on ties) onto the measurement row. */
export async function refreshBaseTime(q: Queryable, measUuid: string): Promise<void> {
  const top = await q.get<BaseTimeRow>(
    "SELECT * FROM meas_basetimes WHERE measurement_uuid = ? ORDER BY priority DESC, updated_at DESC, id DESC LIMIT 1",
    [measUuid],
  );
  if (!top) return;
  await q.run(
    "UPDATE meas_measurements SET basetime_id = ?, basetime_type = ?, basetime_s = ?, basetime_nanos = ? WHERE uuid = ?",
    [top.id, top.type, top.basetime_s, top.basetime_nanos, measUuid],
  );
}
