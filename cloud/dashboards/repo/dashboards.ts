// Dashboards (dashboards) and the dashboard each edge's measurements open on (dashboard_edge_defaults).
import type { Queryable } from "../../database/db.js";

export interface DashboardRow {
  uuid: string;
  project_uuid: string;
  name: string;
  /** JSON array of panels (schemas.ts: Panel). */
  panels: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export async function insertDashboard(q: Queryable, r: DashboardRow): Promise<void> {
  await q.run(
    "INSERT INTO dashboards (uuid, project_uuid, name, panels, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    [r.uuid, r.project_uuid, r.name, r.panels, r.created_by, r.created_at, r.updated_at],
  );
}

export async function updateDashboard(
  q: Queryable,
  r: Pick<DashboardRow, "uuid" | "name" | "panels" | "updated_at">,
): Promise<void> {
  await q.run("UPDATE dashboards SET name = ?, panels = ?, updated_at = ? WHERE uuid = ?", [
    r.name,
    r.panels,
    r.updated_at,
    r.uuid,
  ]);
}

export const findDashboard = (q: Queryable, project: string, uuid: string) =>
  q.get<DashboardRow>("SELECT * FROM dashboards WHERE project_uuid = ? AND uuid = ?", [project, uuid]);

export const countDashboards = async (q: Queryable, project: string) =>
  (await q.get<{ n: number }>("SELECT COUNT(*) AS n FROM dashboards WHERE project_uuid = ?", [project]))?.n ?? 0;

export const pageOfDashboards = (q: Queryable, project: string, limit: number, offset: number) =>
  q.all<DashboardRow>("SELECT * FROM dashboards WHERE project_uuid = ? ORDER BY name, uuid LIMIT ? OFFSET ?", [
    project,
    limit,
    offset,
  ]);

export async function deleteDashboard(q: Queryable, project: string, uuid: string): Promise<void> {
  await q.run("DELETE FROM dashboard_edge_defaults WHERE project_uuid = ? AND dashboard_uuid = ?", [project, uuid]);
  await q.run("DELETE FROM dashboards WHERE project_uuid = ? AND uuid = ?", [project, uuid]);
}

/** The edges whose measurements open on each of the given dashboards. */
export const defaultsOf = (q: Queryable, project: string) =>
  q.all<{ edge_uuid: string; dashboard_uuid: string }>(
    "SELECT edge_uuid, dashboard_uuid FROM dashboard_edge_defaults WHERE project_uuid = ? ORDER BY edge_uuid",
    [project],
  );

/** Makes the dashboard the default of exactly these edges of the project (an edge has at most one default). */
export async function setDefaults(q: Queryable, project: string, dashboard: string, edges: string[]): Promise<void> {
  await q.run("DELETE FROM dashboard_edge_defaults WHERE project_uuid = ? AND dashboard_uuid = ?", [
    project,
    dashboard,
  ]);
  for (const edge of edges) {
    await q.run("DELETE FROM dashboard_edge_defaults WHERE project_uuid = ? AND edge_uuid = ?", [project, edge]);
    await q.run("INSERT INTO dashboard_edge_defaults (project_uuid, edge_uuid, dashboard_uuid) VALUES (?, ?, ?)", [
      project,
      edge,
      dashboard,
    ]);
  }
}
