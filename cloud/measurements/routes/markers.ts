// Measurement markers under intdash's operationIds (MeasMeasurementMarkersApi): by measurement
// (`/measurements/{m}/markers[/{marker}]`) and by marker alone (`/measurements/markers[/{marker}]`).
import type { Context } from "koa";
import * as Schema from "effect/Schema";
import { dual } from "./dual-route.js";
import { pageLink } from "./measurements.js";
import {
  MarkerBody,
  MarkerParams,
  MarkerResponse,
  MarkerUuidParams,
  MeasParams,
  ProjectMarkersQuery,
} from "../schemas.js";
import type { MarkerInput } from "../service/markers.js";

const Markers = Schema.Struct({ items: Schema.Array(MarkerResponse) });
const MarkersPage = Schema.Struct({
  items: Schema.Array(MarkerResponse),
  page: Schema.Struct({
    total_count: Schema.Int,
    first: Schema.Boolean,
    last: Schema.Boolean,
    next: Schema.String,
    previous: Schema.String,
  }),
});

const input = (b: typeof MarkerBody.Type): MarkerInput => ({
  name: b.name,
  description: b.description,
  type: b.type,
  tag: b.tag,
  detail: b.detail,
});

/** Every value of a query key given once or repeated (`uuid=a&uuid=b`, as intdash's list takes them). */
function all(ctx: Context, key: string): string[] | undefined {
  const v = ctx.query[key];
  return v === undefined ? undefined : Array.isArray(v) ? v : [v];
}

/** `tag.<key>=<value>` (any may match) and `!tag.<key>` (none may be present) of listProjectMeasurementMarkers. */
function tagFilters(ctx: Context): { anyTag: Array<[string, string]>; noTag: string[] } {
  const anyTag: Array<[string, string]> = [];
  const noTag: string[] = [];
  for (const [k, v] of Object.entries(ctx.query)) {
    if (k.startsWith("tag.") && k.length > 4)
      for (const value of Array.isArray(v) ? v : [v ?? ""]) anyTag.push([k.slice(4), value]);
    else if (k.startsWith("!tag.") && k.length > 5) noTag.push(k.slice(5));
  }
  return { anyTag, noTag };
}

const DEFAULT_LIMIT = 1000;

export const markerRoutes = [
  ...dual({
    projectOp: "createProjectMeasurementMarker",
    legacyOp: "createMeasurementMarker",
    method: "POST",
    path: "/measurements/{measurement_uuid}/markers",
    params: MeasParams,
    body: MarkerBody,
    success: 201,
    response: MarkerResponse,
    errors: [404],
    handler: ({ project, params, body, principal }, svc) =>
      svc.measurements.markers.create(project, params.measurement_uuid, input(body), principal!.uuid),
  }),
  ...dual({
    projectOp: "getProjectMeasurementMarkersWithMeasurementUUID",
    legacyOp: "getMeasurementMarkersWithMeasurementUUID",
    method: "GET",
    path: "/measurements/{measurement_uuid}/markers",
    params: MeasParams,
    success: 200,
    response: Markers,
    errors: [404],
    handler: ({ project, params }, svc) => svc.measurements.markers.list(project, params.measurement_uuid),
  }),
  ...dual({
    projectOp: "deleteProjectMeasurementMarkers",
    legacyOp: "deleteMeasurementMarkers",
    method: "DELETE",
    path: "/measurements/{measurement_uuid}/markers",
    summary: "Delete every marker of a measurement",
    params: MeasParams,
    success: 204,
    errors: [404],
    handler: async ({ project, params }, svc) => {
      await svc.measurements.markers.removeAll(project, params.measurement_uuid);
    },
  }),
  ...dual({
    projectOp: "getProjectMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    legacyOp: "getMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    method: "GET",
    path: "/measurements/{measurement_uuid}/markers/{measurement_marker_uuid}",
    params: MarkerParams,
    success: 200,
    response: MarkerResponse,
    errors: [404],
    handler: ({ project, params }, svc) =>
      svc.measurements.markers.get(project, params.measurement_uuid, params.measurement_marker_uuid),
  }),
  ...dual({
    projectOp: "updateProjectMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    legacyOp: "updateMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    method: "PUT",
    path: "/measurements/{measurement_uuid}/markers/{measurement_marker_uuid}",
    summary: "Update a marker: the fields given replace the stored ones",
    params: MarkerParams,
    body: MarkerBody,
    success: 200,
    response: MarkerResponse,
    errors: [404],
    handler: ({ project, params, body, principal }, svc) =>
      svc.measurements.markers.update(
        project,
        params.measurement_uuid,
        params.measurement_marker_uuid,
        input(body),
        principal!.uuid,
      ),
  }),
  ...dual({
    projectOp: "deleteProjectMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    legacyOp: "deleteMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    method: "DELETE",
    path: "/measurements/{measurement_uuid}/markers/{measurement_marker_uuid}",
    params: MarkerParams,
    success: 204,
    errors: [404],
    handler: async ({ project, params }, svc) => {
      await svc.measurements.markers.remove(project, params.measurement_uuid, params.measurement_marker_uuid);
    },
  }),
  ...dual({
    projectOp: "listProjectMeasurementMarkers",
    legacyOp: "listMeasurementMarkers",
    method: "GET",
    path: "/measurements/markers",
    summary: "Markers of the project's measurements; also tag.<key>=<value> (any) and !tag.<key> (none) filters",
    query: ProjectMarkersQuery,
    success: 200,
    response: MarkersPage,
    handler: async ({ project, query: q, ctx }, svc) => {
      const items = await svc.measurements.markers.listProject(project, {
        uuids: all(ctx, "uuid"),
        names: all(ctx, "name"),
        startUs: q.start_unix_micro,
        endUs: q.end_unix_micro,
        ...tagFilters(ctx),
        sort: q.sort ?? "base_time",
        desc: q.order === "desc",
      });
      const limit = q.limit ? q.limit : DEFAULT_LIMIT;
      const page = q.page ?? 1;
      const last = page * limit >= items.length;
      return {
        items: items.slice((page - 1) * limit, page * limit),
        page: {
          total_count: items.length,
          first: page === 1,
          last,
          next: last ? "" : pageLink(ctx, page + 1),
          previous: page === 1 ? "" : pageLink(ctx, page - 1),
        },
      };
    },
  }),
  ...dual({
    projectOp: "getProjectMeasurementMarker",
    legacyOp: "getMeasurementMarker",
    method: "GET",
    path: "/measurements/markers/{measurement_marker_uuid}",
    params: MarkerUuidParams,
    success: 200,
    response: MarkerResponse,
    errors: [404],
    handler: ({ project, params }, svc) =>
      svc.measurements.markers.get(project, undefined, params.measurement_marker_uuid),
  }),
  ...dual({
    projectOp: "updateProjectMeasurementMarker",
    legacyOp: "updateMeasurementMarker",
    method: "PUT",
    path: "/measurements/markers/{measurement_marker_uuid}",
    summary: "Update a marker: the fields given replace the stored ones",
    params: MarkerUuidParams,
    body: MarkerBody,
    success: 200,
    response: MarkerResponse,
    errors: [404],
    handler: ({ project, params, body, principal }, svc) =>
      svc.measurements.markers.update(project, undefined, params.measurement_marker_uuid, input(body), principal!.uuid),
  }),
  ...dual({
    projectOp: "deleteProjectMeasurementMarker",
    legacyOp: "deleteMeasurementMarker",
    method: "DELETE",
    path: "/measurements/markers/{measurement_marker_uuid}",
    params: MarkerUuidParams,
    success: 204,
    errors: [404],
    handler: async ({ project, params }, svc) => {
      await svc.measurements.markers.remove(project, undefined, params.measurement_marker_uuid);
    },
  }),
];
