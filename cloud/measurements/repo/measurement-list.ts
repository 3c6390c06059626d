// SQL for listing measurements (intdash REST API: listProjectMeasurements, listMeasurements): the filters,
// sort keys and paging.
import type { Queryable, SqlParam } from "../../database/db.js";
import type { MeasRow } from "../service/model.js";

export interface MeasurementFilter {
  project_uuid: string;
  uuids?: readonly string[];
  name?: { exact: boolean; value: string };
  edge_uuid?: string;
  /** Unix microseconds. */
  startUs?: number;
  endUs?: number;
  partialMatch: boolean;
  basetime_type?: string;
  ended?: boolean;
  /** ISO text compared with updated_at. */
  since?: string;
  durationStartUs?: number;
  durationEndUs?: number;
  statuses?: readonly string[];
  sort: string;
  desc: boolean;
  limit: number;
  offset: number;
}

const BASETIME_US = "(basetime_s * 1000000 + basetime_nanos / 1000)";
const END_US = `(${BASETIME_US} + max_elapsed_ns / 1000)`;

const SORT_COLUMNS: Record<string, string[]> = {
  name: ["name"],
  description: ["description"],
  ended: ["ended"],
  duration: ["max_elapsed_ns"],
  base_time: ["basetime_s", "basetime_nanos"],
  // The ratio itself is computed from the sequences; its order follows the status.
  processed_ratio: ["CASE status WHEN 'completed' THEN 3 WHEN 'resending' THEN 2 WHEN 'measuring' THEN 1 ELSE 0 END"],
  created_at: ["created_at"],
  updated_at: ["updated_at"],
};

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The deprecated top-level statuses map onto the stored ones. */
const STATUS_MAP: Record<string, string[]> = {
  measuring: ["ready", "measuring"],
  resending: ["resending"],
  finished: ["completed"],
};

export async function listMeasurements(
  q: Queryable,
  f: MeasurementFilter,
): Promise<{ rows: MeasRow[]; total: number }> {
  const where: string[] = ["project_uuid = ?"];
  const args: SqlParam[] = [f.project_uuid];
  if (f.uuids?.length) {
    where.push(`uuid IN (${f.uuids.map(() => "?").join(",")})`);
    args.push(...f.uuids.map((u) => u.toLowerCase()));
  }
  if (f.name) {
    if (f.name.exact) where.push("name = ?"), args.push(f.name.value);
    else where.push("name LIKE ? ESCAPE '\\'"), args.push(`${escapeLike(f.name.value)}%`);
  }
  if (f.edge_uuid) where.push("edge_uuid = ?"), args.push(f.edge_uuid.toLowerCase());
  if (f.partialMatch) {
    if (f.startUs !== undefined) where.push(`${END_US} > ?`), args.push(f.startUs);
    if (f.endUs !== undefined) where.push(`${BASETIME_US} < ?`), args.push(f.endUs);
  } else {
    if (f.startUs !== undefined) where.push(`${BASETIME_US} >= ?`), args.push(f.startUs);
    if (f.endUs !== undefined) where.push(`${BASETIME_US} < ?`), args.push(f.endUs);
  }
  if (f.basetime_type) where.push("basetime_type = ?"), args.push(f.basetime_type);
  if (f.ended !== undefined) where.push("ended = ?"), args.push(f.ended ? 1 : 0);
  if (f.since) where.push("updated_at >= ?"), args.push(f.since);
  if (f.durationStartUs !== undefined) where.push("max_elapsed_ns / 1000 >= ?"), args.push(f.durationStartUs);
  if (f.durationEndUs !== undefined) where.push("max_elapsed_ns / 1000 <= ?"), args.push(f.durationEndUs);
  if (f.statuses?.length) {
    const stored = [...new Set(f.statuses.flatMap((s) => STATUS_MAP[s] ?? []))];
    where.push(`status IN (${stored.map(() => "?").join(",")})`);
    args.push(...stored);
  }
  const cond = where.join(" AND ");
  const dir = f.desc ? "DESC" : "ASC";
  const order = [...(SORT_COLUMNS[f.sort] ?? SORT_COLUMNS.base_time!), "uuid"].map((c) => `${c} ${dir}`).join(", ");
  const total = (await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM meas_measurements WHERE ${cond}`, args))?.n ?? 0;
  const rows = await q.all<MeasRow>(
    `SELECT * FROM meas_measurements WHERE ${cond} ORDER BY ${order} LIMIT ? OFFSET ?`,
    [...args, f.limit, f.offset],
  );
  return { rows, total };
}

/** Measurements the data endpoint's `name` selects: a measurement UUID, else an edge UUID. */
export async function measurementsForName(q: Queryable, project: string, name: string): Promise<MeasRow[]> {
  const lower = name.toLowerCase();
  const one = await q.all<MeasRow>("SELECT * FROM meas_measurements WHERE project_uuid = ? AND uuid = ?", [
    project,
    lower,
  ]);
  if (one.length) return one;
  return q.all<MeasRow>(
    "SELECT * FROM meas_measurements WHERE project_uuid = ? AND edge_uuid = ? ORDER BY basetime_s, basetime_nanos, uuid",
    [project, lower],
  );
}
