// Dashboard storage (versions 600-699): a project's saved dashboards, which one an edge's measurements open on,
// and the display names and units of an edge's series.
import type { Migration } from "../../database/migrate.js";

export const dashboardMigrations: Migration[] = [
  {
    version: 600,
    name: "dashboards, edge defaults and series labels",
    up: `
CREATE TABLE dashboards (
  uuid TEXT PRIMARY KEY,
  project_uuid TEXT NOT NULL,
  name TEXT NOT NULL,
  panels TEXT NOT NULL DEFAULT '[]',
  created_by TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX dashboards_project ON dashboards (project_uuid, name);

CREATE TABLE dashboard_edge_defaults (
  project_uuid TEXT NOT NULL,
  edge_uuid TEXT NOT NULL,
  dashboard_uuid TEXT NOT NULL REFERENCES dashboards (uuid) ON DELETE CASCADE,
  PRIMARY KEY (project_uuid, edge_uuid)
);

CREATE TABLE series_labels (
  project_uuid TEXT NOT NULL,
  edge_uuid TEXT NOT NULL,
  data_type TEXT NOT NULL,
  data_id TEXT NOT NULL,
  field TEXT NOT NULL DEFAULT '',
  display_name TEXT NOT NULL DEFAULT '',
  unit TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL,
  PRIMARY KEY (project_uuid, edge_uuid, data_type, data_id, field)
);
`,
  },
];
