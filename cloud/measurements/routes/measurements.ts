// Measurement resources: create (also with a given UUID), list, get, update, delete, end, complete, protect.
import type { Context } from "koa";
import { parseNameFilter } from "../../http/query.js";
import { dual, requireEdgeOfProject } from "./dual-route.js";
import {
  ListMeasurementsQuery,
  MeasCreate,
  MeasParams,
  MeasurementResponse,
  MeasurementsResponse,
  ReplaceMeas,
  SequenceSummary,
} from "../schemas.js";
import type { CreateMeasurementInput } from "../service/measurement-store.js";

const DEFAULT_LIMIT = 1000;

const toInput = (b: typeof MeasCreate.Type): CreateMeasurementInput => ({ ...b, basetimeNs: b.basetime });

const nsToUs = (ns: bigint | undefined) => (ns === undefined ? undefined : Number(ns / 1000n));
const nsToIso = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();

/** PageDetail.next / previous: the same request with another page, or "". */
export function pageLink(ctx: Context, page: number): string {
  const params = new URLSearchParams(ctx.querystring);
  params.set("page", String(page));
  return `${ctx.path}?${params.toString()}`;
}

export const measurementRoutes = [
  ...dual({
    projectOp: "createProjectMeasurement",
    legacyOp: "createMeasurement",
    method: "POST",
    path: "/measurements",
    body: MeasCreate,
    success: 201,
    response: MeasurementResponse,
    handler: ({ project, body }, svc) => {
      requireEdgeOfProject(svc, project, body.edge_uuid);
      return svc.measurements.measurements.create(project, toInput(body));
    },
  }),
  ...dual({
    projectOp: "createProjectMeasurementWithUUID",
    legacyOp: "createMeasurementWithUUID",
    method: "POST",
    path: "/measurements/{measurement_uuid}",
    params: MeasParams,
    body: MeasCreate,
    success: 201,
    response: MeasurementResponse,
    errors: [409],
    handler: ({ project, params, body }, svc) => {
      requireEdgeOfProject(svc, project, body.edge_uuid);
      return svc.measurements.measurements.create(project, toInput(body), params.measurement_uuid);
    },
  }),
  ...dual({
    projectOp: "listProjectMeasurements",
    legacyOp: "listMeasurements",
    method: "GET",
    path: "/measurements",
    query: ListMeasurementsQuery,
    success: 200,
    response: MeasurementsResponse,
    handler: async ({ project, query: q, ctx }, svc) => {
      const limit = q.limit === 0 ? DEFAULT_LIMIT : q.limit;
      const { items: listed, total } = await svc.measurements.measurements.list({
        project_uuid: project,
        uuids: q["uuid[]"],
        name: q.name !== undefined ? parseNameFilter(q.name) : undefined,
        edge_uuid: q.edge_uuid,
        startUs: nsToUs(q.start),
        endUs: nsToUs(q.end),
        partialMatch: q.partial_match,
        basetime_type: q.basetime_type,
        ended: q.ended,
        since: q.since !== undefined ? nsToIso(q.since) : undefined,
        durationStartUs: q.duration_start,
        durationEndUs: q.duration_end,
        statuses: q["status[]"],
        sort: q.sort,
        desc: q.order === "desc",
        limit,
        offset: (q.page - 1) * limit,
      });
      const last = q.page * limit >= total;
      const markers = await svc.measurements.markers.ofMeasurements(listed.map((m) => m.uuid));
      const items = listed.map((m) => ({ ...m, markers: markers.get(m.uuid) ?? [] }));
      return {
        items,
        page: {
          total_count: total,
          first: q.page === 1,
          last,
          next: last ? "" : pageLink(ctx, q.page + 1),
          previous: q.page === 1 ? "" : pageLink(ctx, q.page - 1),
        },
      };
    },
  }),
  ...dual({
    projectOp: "getProjectMeasurement",
    legacyOp: "getMeasurement",
    method: "GET",
    path: "/measurements/{measurement_uuid}",
    params: MeasParams,
    success: 200,
    response: MeasurementResponse,
    errors: [404],
    handler: async ({ project, params }, svc) => {
      const m = await svc.measurements.measurements.get(project, params.measurement_uuid);
      return { ...m, markers: (await svc.measurements.markers.ofMeasurements([m.uuid])).get(m.uuid) ?? [] };
    },
  }),
  ...dual({
    projectOp: "updateProjectMeasurement",
    legacyOp: "updateMeasurement",
    method: "PUT",
    path: "/measurements/{measurement_uuid}",
    params: MeasParams,
    body: ReplaceMeas,
    success: 204,
    errors: [404],
    handler: async ({ project, params, body }, svc) => {
      await svc.measurements.measurements.update(project, params.measurement_uuid, body);
    },
  }),
  ...dual({
    projectOp: "deleteProjectMeasurement",
    legacyOp: "deleteMeasurement",
    method: "DELETE",
    path: "/measurements/{measurement_uuid}",
    params: MeasParams,
    success: 204,
    errors: [404],
    handler: async ({ project, params }, svc) => {
      await svc.measurements.measurements.remove(project, params.measurement_uuid);
    },
  }),
  ...dual({
    projectOp: "endProjectMeasurement",
    legacyOp: "endMeasurement",
    method: "PUT",
    path: "/measurements/{measurement_uuid}/end",
    params: MeasParams,
    success: 200,
    response: SequenceSummary,
    errors: [404],
    handler: ({ project, params }, svc) => svc.measurements.measurements.end(project, params.measurement_uuid),
  }),
  ...dual({
    projectOp: "completeProjectMeasurement",
    legacyOp: "completeMeasurement",
    method: "PUT",
    path: "/measurements/{measurement_uuid}/complete",
    params: MeasParams,
    success: 200,
    response: MeasurementResponse,
    errors: [404],
    handler: ({ project, params }, svc) => svc.measurements.measurements.complete(project, params.measurement_uuid),
  }),
  ...dual({
    projectOp: "protectProjectMeasurement",
    legacyOp: "protectMeasurement",
    method: "PUT",
    path: "/measurements/{measurement_uuid}/protected",
    params: MeasParams,
    success: 204,
    errors: [404],
    handler: async ({ project, params }, svc) => {
      await svc.measurements.measurements.setProtected(project, params.measurement_uuid, true);
    },
  }),
  ...dual({
    projectOp: "unprotectProjectMeasurement",
    legacyOp: "unprotectMeasurement",
    method: "DELETE",
    path: "/measurements/{measurement_uuid}/protected",
    params: MeasParams,
    success: 204,
    errors: [404],
    handler: async ({ project, params }, svc) => {
      await svc.measurements.measurements.setProtected(project, params.measurement_uuid, false);
    },
  }),
];
