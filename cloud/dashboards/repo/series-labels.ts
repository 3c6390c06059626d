// Display names and units of an edge's series (series_labels), keyed by data type, data ID and JSON field.
import type { Queryable } from "../../database/db.js";

export interface SeriesLabelRow {
  project_uuid: string;
  edge_uuid: string;
  data_type: string;
  data_id: string;
  /** JSON pointer of a field of JSON data; empty for the data ID itself. */
  field: string;
  display_name: string;
  unit: string;
  updated_at: string;
}

export const labelsOf = (q: Queryable, project: string, edge: string) =>
  q.all<SeriesLabelRow>(
    "SELECT * FROM series_labels WHERE project_uuid = ? AND edge_uuid = ? ORDER BY data_type, data_id, field",
    [project, edge],
  );

const KEY = "project_uuid = ? AND edge_uuid = ? AND data_type = ? AND data_id = ? AND field = ?";
const keyOf = (r: SeriesLabelRow) => [r.project_uuid, r.edge_uuid, r.data_type, r.data_id, r.field];

/** Writes the label, or removes it when both its display name and unit are empty. */
export async function putLabel(q: Queryable, r: SeriesLabelRow): Promise<void> {
  await q.run(`DELETE FROM series_labels WHERE ${KEY}`, keyOf(r));
  if (r.display_name === "" && r.unit === "") return;
  await q.run(
    "INSERT INTO series_labels (project_uuid, edge_uuid, data_type, data_id, field, display_name, unit, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    [...keyOf(r), r.display_name, r.unit, r.updated_at],
  );
}
