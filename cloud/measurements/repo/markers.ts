// Measurement markers (meas_markers): point and range annotations on a measurement's time line.
import type { Queryable } from "../../database/db.js";

export interface MarkerRow {
  uuid: string;
  measurement_uuid: string;
  type: "point" | "range";
  name: string;
  description: string;
  /** JSON object of strings. */
  tag: string;
  occurred_us: number | null;
  start_us: number | null;
  end_us: number | null;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
}

/** A marker with what the project-wide list filters and sorts on. */
export interface ProjectMarkerRow extends MarkerRow {
  basetime_s: number;
  basetime_nanos: number;
}

export type MarkerValues = Pick<
  MarkerRow,
  "type" | "name" | "description" | "tag" | "occurred_us" | "start_us" | "end_us"
>;

export async function insertMarker(q: Queryable, row: MarkerRow): Promise<void> {
  await q.run(
    `INSERT INTO meas_markers (uuid, measurement_uuid, type, name, description, tag, occurred_us, start_us, end_us, created_at, created_by, updated_at, updated_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      row.uuid,
      row.measurement_uuid,
      row.type,
      row.name,
      row.description,
      row.tag,
      row.occurred_us,
      row.start_us,
      row.end_us,
      row.created_at,
      row.created_by,
      row.updated_at,
      row.updated_by,
    ],
  );
}

export async function updateMarker(
  q: Queryable,
  uuid: string,
  v: MarkerValues,
  now: string,
  by: string,
): Promise<void> {
  await q.run(
    "UPDATE meas_markers SET type = ?, name = ?, description = ?, tag = ?, occurred_us = ?, start_us = ?, end_us = ?, updated_at = ?, updated_by = ? WHERE uuid = ?",
    [v.type, v.name, v.description, v.tag, v.occurred_us, v.start_us, v.end_us, now, by, uuid],
  );
}

export const findMarker = (q: Queryable, uuid: string) =>
  q.get<MarkerRow>("SELECT * FROM meas_markers WHERE uuid = ?", [uuid]);

/** A measurement's markers by time (a range by its start), then creation. */
export const markersOf = (q: Queryable, measUuid: string) =>
  q.all<MarkerRow>(
    "SELECT * FROM meas_markers WHERE measurement_uuid = ? ORDER BY COALESCE(occurred_us, start_us), created_at, uuid",
    [measUuid],
  );

/** Measurements per statement: a list page may hold up to 100,000, beyond SQLite's bound-parameter limit. */
const BATCH = 500;

export async function markersOfMany(q: Queryable, measUuids: readonly string[]): Promise<Map<string, MarkerRow[]>> {
  const out = new Map<string, MarkerRow[]>(measUuids.map((u) => [u, []]));
  for (let i = 0; i < measUuids.length; i += BATCH) {
    const batch = measUuids.slice(i, i + BATCH);
    const rows = await q.all<MarkerRow>(
      `SELECT * FROM meas_markers WHERE measurement_uuid IN (${batch.map(() => "?").join(", ")}) ORDER BY COALESCE(occurred_us, start_us), created_at, uuid`,
      batch,
    );
    for (const r of rows) out.get(r.measurement_uuid)!.push(r);
  }
  return out;
}

/** Every marker of a project's measurements, with their measurements' base times. */
export const projectMarkers = (q: Queryable, project: string) =>
  q.all<ProjectMarkerRow>(
    `SELECT k.*, m.basetime_s AS basetime_s, m.basetime_nanos AS basetime_nanos FROM meas_markers k
     JOIN meas_measurements m ON m.uuid = k.measurement_uuid WHERE m.project_uuid = ?`,
    [project],
  );

export const deleteMarker = (q: Queryable, uuid: string) => q.run("DELETE FROM meas_markers WHERE uuid = ?", [uuid]);

export const deleteMarkersOf = (q: Queryable, measUuid: string) =>
  q.run("DELETE FROM meas_markers WHERE measurement_uuid = ?", [measUuid]);
