// A project's dashboards and its edges' series labels: the peer's own operations (the intdash API has none),
// under /v1/projects/{project_uuid} so the guard judges them as the project's measurement data (read with
// measurements:r, written with measurements:w).
import { defineRoute, type AnyRoute } from "../../http/route.js";
import type { Services } from "../../services.js";
import { existingProject, requireEdgesOfProject } from "../../org/service/project-checks.js";
import {
  Dashboard,
  DashboardCreateRequest,
  DashboardParams,
  Dashboards,
  DashboardsQuery,
  DashboardUpdateRequest,
  ProjectParams,
  SeriesLabel,
  SeriesLabelRequest,
  SeriesLabels,
  SeriesLabelsQuery,
} from "../schemas.js";

const TAG = "dashboards";
const P = "/v1/projects/{project_uuid}";
/** The path's project: named ones must exist; dashboards are kept in the default project too. */
const project = (svc: Services, uuid: string) => existingProject(svc.org.index, uuid, true);

/** The body, once the edges it names are the project's (as measurements' edge_uuid). */
function edgesOf<T extends { default_edge_uuids?: readonly string[]; edge_uuid?: string }>(
  svc: Services,
  project: string,
  body: T,
  field: "default_edge_uuids" | "edge_uuid",
): T {
  const edges = [...(body.default_edge_uuids ?? []), ...(body.edge_uuid ? [body.edge_uuid] : [])];
  requireEdgesOfProject(svc.org.index, project, edges, field);
  return body;
}

export const dashboardRoutes: AnyRoute[] = [
  defineRoute({
    operationId: "createProjectDashboard",
    method: "POST",
    path: `${P}/dashboards`,
    tag: TAG,
    summary: "Save a dashboard (panels, and the edges whose measurements open on it)",
    params: ProjectParams,
    body: DashboardCreateRequest,
    success: 201,
    response: Dashboard,
    handler: ({ params, body, principal }, svc) =>
      svc.dashboards.create(
        project(svc, params.project_uuid),
        edgesOf(svc, params.project_uuid.toLowerCase(), body, "default_edge_uuids"),
        principal?.uuid ?? "",
      ),
  }),
  defineRoute({
    operationId: "listProjectDashboards",
    method: "GET",
    path: `${P}/dashboards`,
    tag: TAG,
    params: ProjectParams,
    query: DashboardsQuery,
    success: 200,
    response: Dashboards,
    handler: ({ params, query }, svc) =>
      svc.dashboards.list(project(svc, params.project_uuid), query.page, query.per_page),
  }),
  defineRoute({
    operationId: "getProjectDashboard",
    method: "GET",
    path: `${P}/dashboards/{dashboard_uuid}`,
    tag: TAG,
    params: DashboardParams,
    success: 200,
    response: Dashboard,
    errors: [404],
    handler: ({ params }, svc) => svc.dashboards.get(project(svc, params.project_uuid), params.dashboard_uuid),
  }),
  defineRoute({
    operationId: "updateProjectDashboard",
    method: "PATCH",
    path: `${P}/dashboards/{dashboard_uuid}`,
    tag: TAG,
    summary: "Change a dashboard; default_edge_uuids, when given, replaces the edges that open on it",
    params: DashboardParams,
    body: DashboardUpdateRequest,
    success: 200,
    response: Dashboard,
    errors: [404],
    handler: ({ params, body }, svc) =>
      svc.dashboards.update(
        project(svc, params.project_uuid),
        params.dashboard_uuid,
        edgesOf(svc, params.project_uuid.toLowerCase(), body, "default_edge_uuids"),
      ),
  }),
  defineRoute({
    operationId: "deleteProjectDashboard",
    method: "DELETE",
    path: `${P}/dashboards/{dashboard_uuid}`,
    tag: TAG,
    params: DashboardParams,
    success: 204,
    errors: [404],
    handler: async ({ params }, svc) => {
      await svc.dashboards.remove(project(svc, params.project_uuid), params.dashboard_uuid);
    },
  }),
  defineRoute({
    operationId: "listProjectSeriesLabels",
    method: "GET",
    path: `${P}/series_labels`,
    tag: TAG,
    summary: "The display names and units of an edge's series",
    params: ProjectParams,
    query: SeriesLabelsQuery,
    success: 200,
    response: SeriesLabels,
    handler: ({ params, query }, svc) =>
      svc.dashboards.seriesLabels(project(svc, params.project_uuid), query.edge_uuid),
  }),
  defineRoute({
    operationId: "putProjectSeriesLabel",
    method: "PUT",
    path: `${P}/series_labels`,
    tag: TAG,
    summary: "Set the display name and unit of one of an edge's series (both empty: remove them)",
    params: ProjectParams,
    body: SeriesLabelRequest,
    success: 200,
    response: SeriesLabel,
    handler: ({ params, body }, svc) =>
      svc.dashboards.putSeriesLabel(
        project(svc, params.project_uuid),
        edgesOf(svc, params.project_uuid.toLowerCase(), body, "edge_uuid"),
      ),
  }),
];
