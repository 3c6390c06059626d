// SQL of the shared group commit (ingest/shared-commit.ts): the chunks of every stream in one commit go in a
// few multi-row statements whose number does not grow with the streams or the chunks. Rows travel as one
// parameter per column: on SQLite a JSON array of rows read with json_each, on PostgreSQL one array per
// column read with unnest. Either way a statement's text stays the same whatever the row count, so it is
// parsed and planned once and then only bound.
import type { Queryable, SqlParam } from "../../database/db.js";
import type { MeasRow } from "../service/model.js";

/**
 * Rows as SQLite's json_each reads them (`value->>i` is column i); on PostgreSQL an array per column, each written
 * as PostgreSQL's array literal (`{1,NULL,"a\"b"}`, which the statement casts to bigint[] or text[]). pg would
 * write the same text from a JavaScript array, but element by element through its generic escaping: for the
 * thousands of values of a commit that took about 4 % of the peer's main thread (docs/decisions.md).
 */
export function rowsParam(q: Queryable, rows: ReadonlyArray<readonly unknown[]>, width: number): SqlParam[] {
  if (q.dialect === "sqlite") return [JSON.stringify(rows)];
  const columns: string[] = [];
  for (let i = 0; i < width; i++) {
    let literal = "{";
    for (let j = 0; j < rows.length; j++) literal += `${j === 0 ? "" : ","}${arrayElement(rows[j]![i])}`;
    columns.push(`${literal}}`);
  }
  return columns;
}

/** One element of an array literal: NULL, a number as digits, anything else quoted with `\` and `"` escaped. */
function arrayElement(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  const s = String(v);
  return `"${/["\\]/.test(s) ? s.replace(/["\\]/g, "\\$&") : s}"`;
}

const isPg = (q: Queryable) => q.dialect === "postgres";

/** What a commit needs of a measurement row: its key, its owner, and whether it still measures. */
export type SessionRow = Pick<MeasRow, "uuid" | "created_at" | "project_uuid" | "edge_uuid" | "ended" | "completed">;
const SESSION_COLUMNS = "uuid, created_at, project_uuid, edge_uuid, ended, completed";

/** The measurement rows of these uuids (those that exist). */
export function findMeasurements(q: Queryable, uuids: readonly string[]): Promise<SessionRow[]> {
  if (isPg(q))
    return q.all<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM meas_measurements WHERE uuid = ANY(?::text[])`, [
      uuids as unknown as SqlParam,
    ]);
  return q.all<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM meas_measurements WHERE uuid IN (SELECT value FROM json_each(?))`,
    [JSON.stringify(uuids)],
  );
}

export interface SequenceKey {
  measUuid: string;
  uuid: string;
}

/** The sequences, created where missing (each pair once), with their ids. */
export function ensureSequences(q: Queryable, keys: readonly SequenceKey[], now: string) {
  const rows = keys.map((k) => [k.measUuid, k.uuid]);
  const sql = isPg(q)
    ? `INSERT INTO meas_sequences (measurement_uuid, uuid, created_at, updated_at) SELECT u.m, u.s, ?, ? FROM unnest(?::text[], ?::text[]) AS u(m, s)
       ON CONFLICT (measurement_uuid, uuid) DO UPDATE SET uuid = excluded.uuid RETURNING id, measurement_uuid, uuid`
    : `INSERT INTO meas_sequences (measurement_uuid, uuid, created_at, updated_at) SELECT value->>0, value->>1, ?, ? FROM json_each(?) WHERE true
       ON CONFLICT (measurement_uuid, uuid) DO UPDATE SET uuid = excluded.uuid RETURNING id, measurement_uuid, uuid`;
  return q.all<{ id: number; measurement_uuid: string; uuid: string }>(sql, [now, now, ...rowsParam(q, rows, 2)]);
}

/** What a commit adds besides its chunks: data ids not listed yet, the sequences' counters, measurements measuring. */
export interface CommitTally {
  dataIds: ReadonlyArray<{ measUuid: string; type: string; name: string }>;
  received: ReadonlyArray<{ sequenceId: number; points: number; chunks: number }>;
  measuring: ReadonlyArray<{ uuid: string; maxElapsedNs: number | null }>;
}

/** One part of a tally: its statement in each dialect (the commit's time first, where `now`), its rows' width. */
interface TallyPart {
  sqlite: string;
  pg: string;
  now: boolean;
  width: number;
}

/** Lists data ids for their measurements (listProjectDataPointDataIDs); one already listed is left. */
const DATA_IDS: TallyPart = {
  sqlite: `INSERT OR IGNORE INTO meas_data_ids (measurement_uuid, data_type, data_name) SELECT value->>0, value->>1, value->>2 FROM json_each(?)`,
  pg: `INSERT INTO meas_data_ids (measurement_uuid, data_type, data_name) SELECT * FROM unnest(?::text[], ?::text[], ?::text[]) ON CONFLICT DO NOTHING`,
  now: false,
  width: 3,
};

/** Adds received points and chunks to their sequences (each id once). */
const RECEIVED: TallyPart = {
  sqlite: `UPDATE meas_sequences SET received_data_points = received_data_points + (v.value->>1),
    received_chunks_count = received_chunks_count + (v.value->>2), updated_at = ? FROM json_each(?) AS v WHERE meas_sequences.id = v.value->>0`,
  pg: `UPDATE meas_sequences s SET received_data_points = s.received_data_points + v.p, received_chunks_count = s.received_chunks_count + v.c,
    updated_at = ? FROM unnest(?::bigint[], ?::bigint[], ?::bigint[]) AS v(id, p, c) WHERE s.id = v.id`,
  now: true,
  width: 3,
};

/**
 * Measurements neither ended nor completed that took chunks (each uuid once): measuring, and their highest
 * elapsed time raised (`maxElapsedNs` null: no point among the chunks). As refreshStatus for chunks stored.
 */
const MEASURING: TallyPart = {
  sqlite: `UPDATE meas_measurements SET max_elapsed_ns = MAX(max_elapsed_ns, COALESCE(v.value->>1, max_elapsed_ns)), status = 'measuring',
    completed = 0, updated_at = ? FROM json_each(?) AS v WHERE meas_measurements.uuid = v.value->>0`,
  pg: `UPDATE meas_measurements m SET max_elapsed_ns = GREATEST(m.max_elapsed_ns, COALESCE(v.e, m.max_elapsed_ns)), status = 'measuring',
    completed = 0, updated_at = ? FROM unnest(?::text[], ?::bigint[]) AS v(uuid, e) WHERE m.uuid = v.uuid`,
  now: true,
  width: 2,
};

/**
 * The statements that record a commit's tally, started at once. SQLite: one per part that has rows (its thread
 * runs them with the chunks' insert). PostgreSQL: the parts as data-modifying CTEs of one statement, as each
 * statement there is a round trip answered in a later turn of the event loop.
 */
export function recordTally(q: Queryable, t: CommitTally, now: string): Array<Promise<unknown>> {
  const parts: Array<[TallyPart, unknown[][]]> = [
    [DATA_IDS, t.dataIds.map((r) => [r.measUuid, r.type, r.name])],
    [RECEIVED, t.received.map((r) => [r.sequenceId, r.points, r.chunks])],
    [MEASURING, t.measuring.map((r) => [r.uuid, r.maxElapsedNs])],
  ];
  const params = ([part, rows]: [TallyPart, unknown[][]]) => [
    ...(part.now ? [now] : []),
    ...rowsParam(q, rows, part.width),
  ];
  if (!isPg(q)) return parts.filter(([, rows]) => rows.length > 0).map((p) => q.run(p[0].sqlite, params(p)));
  if (parts.every(([, rows]) => rows.length === 0)) return [];
  const ctes = parts.map(([part], i) => `t${i} AS (${part.pg})`).join(",\n");
  return [q.run(`WITH ${ctes} SELECT 1`, parts.flatMap(params))];
}

export interface NewSession {
  uuid: string;
  projectUuid: string;
  edgeUuid: string;
  /** The first base time (the server's receive time, type `api_first_received`): seconds and nanos. */
  s: number;
  nanos: number;
}

/**
 * Makes the measurements of sessions seen for the first time, each with its first base time as the current one
 * (as insertMeasurement, insertBaseTime and refreshBaseTime would, in three statements for all of them).
 */
export async function insertSessionMeasurements(
  q: Queryable,
  rows: readonly NewSession[],
  type: string,
  priority: number,
  now: string,
): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map((r) => [r.uuid, r.projectUuid, r.edgeUuid, r.s, r.nanos]);
  const from = isPg(q)
    ? "FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[]) AS v(u, p, e, s, n)"
    : "FROM json_each(?)";
  const [u, p, e, s, n] = isPg(q)
    ? ["v.u", "v.p", "v.e", "v.s", "v.n"]
    : ["value->>0", "value->>1", "value->>2", "value->>3", "value->>4"];
  await q.run(
    `INSERT INTO meas_measurements (uuid, project_uuid, name, description, edge_uuid, protected, basetime_type, basetime_s, basetime_nanos, created_at, updated_at)
     SELECT ${u}, ${p}, '', '', ${e}, 0, ?, ${s}, ${n}, ?, ? ${from}`,
    [type, now, now, ...rowsParam(q, values, 5)],
  );
  await q.run(
    `INSERT INTO meas_basetimes (measurement_uuid, type, name, priority, basetime_s, basetime_nanos, elapsed_time_ns, created_at, updated_at)
     SELECT ${u}, ?, ?, CAST(? AS INTEGER), ${s}, ${n}, 0, ?, ? ${from}`,
    [type, type, priority, now, now, ...rowsParam(q, values, 5)],
  );
  const uuids = rows.map((r) => r.uuid);
  await q.run(
    `UPDATE meas_measurements SET basetime_id = (SELECT b.id FROM meas_basetimes b WHERE b.measurement_uuid = meas_measurements.uuid AND b.name = ?)
     WHERE uuid ${isPg(q) ? "= ANY(?::text[])" : "IN (SELECT value FROM json_each(?))"}`,
    [type, isPg(q) ? (uuids as unknown as SqlParam) : JSON.stringify(uuids)],
  );
}
