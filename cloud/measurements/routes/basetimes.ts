// Base times of a measurement: by type (v2.4 and v2.6) and by numeric id (v2.6, same path segment).
import { dual } from "./dual-route.js";
import { BaseTimeParams, BaseTimeResponse, CreateMeasBaseTime, MeasParams, UpdateMeasBaseTime } from "../schemas.js";
import * as Schema from "effect/Schema";
import { isBaseTimeType } from "../service/model.js";
import { Invalid } from "../../errors.js";

const BaseTimesResponse = Schema.Struct({ items: Schema.Array(BaseTimeResponse) });

const toInput = (b: typeof UpdateMeasBaseTime.Type) => ({
  basetimeNs: b.basetime,
  priority: b.priority,
  name: b.name,
  elapsed_time: b.elapsed_time,
});

export const baseTimeRoutes = [
  ...dual({
    projectOp: "listProjectMeasurementBaseTimes",
    legacyOp: "listMeasurementBaseTimes",
    method: "GET",
    path: "/measurements/{measurement_uuid}/basetimes",
    params: MeasParams,
    success: 200,
    response: BaseTimesResponse,
    errors: [404],
    handler: ({ project, params }, svc) => svc.measurements.baseTimes.list(project, params.measurement_uuid),
  }),
  ...dual({
    projectOp: "createProjectMeasurementBaseTime",
    method: "POST",
    path: "/measurements/{measurement_uuid}/basetimes",
    params: MeasParams,
    body: CreateMeasBaseTime,
    success: 201,
    response: BaseTimeResponse,
    errors: [404, 409],
    handler: ({ project, params, body }, svc) =>
      svc.measurements.baseTimes.create(project, params.measurement_uuid, {
        basetimeNs: body.basetime,
        priority: body.priority,
        name: body.name,
        elapsed_time: body.elapsed_time,
      }),
  }),
  ...dual({
    projectOp: "getProjectMeasurementBaseTime",
    legacyOp: "getMeasurementBaseTime",
    method: "GET",
    path: "/measurements/{measurement_uuid}/basetimes/{type}",
    summary: "Get a base time by type (or by numeric id: getProjectMeasurementBaseTimeByID)",
    params: BaseTimeParams,
    success: 200,
    response: BaseTimeResponse,
    errors: [404],
    handler: ({ project, params }, svc) =>
      svc.measurements.baseTimes.get(project, params.measurement_uuid, params.type),
  }),
  ...dual({
    projectOp: "updateProjectMeasurementBaseTime",
    legacyOp: "updateMeasurementBaseTime",
    method: "PUT",
    path: "/measurements/{measurement_uuid}/basetimes/{type}",
    params: BaseTimeParams,
    body: UpdateMeasBaseTime,
    success: 200,
    response: BaseTimeResponse,
    errors: [404, 409],
    handler: ({ project, params, body }, svc) => {
      if (!isBaseTimeType(params.type))
        throw new Invalid("invalid path parameter: type: expected a base time type", { type: "invalid" });
      return svc.measurements.baseTimes.put(project, params.measurement_uuid, params.type, toInput(body));
    },
  }),
  ...dual({
    projectOp: "updateProjectMeasurementBaseTimeByID",
    method: "PATCH",
    path: "/measurements/{measurement_uuid}/basetimes/{type}",
    summary: "Update a base time by numeric id (the path segment is the id)",
    params: BaseTimeParams,
    body: UpdateMeasBaseTime,
    success: 200,
    response: BaseTimeResponse,
    errors: [404, 409],
    handler: ({ project, params, body }, svc) =>
      svc.measurements.baseTimes.patch(project, params.measurement_uuid, params.type, toInput(body)),
  }),
  ...dual({
    projectOp: "deleteProjectMeasurementBaseTime",
    legacyOp: "deleteMeasurementBaseTime",
    method: "DELETE",
    path: "/measurements/{measurement_uuid}/basetimes/{type}",
    summary:
      "Delete a base time by type (or by numeric id: deleteProjectMeasurementBaseTimeByID); 409 while it is the measurement's base time",
    params: BaseTimeParams,
    success: 204,
    errors: [404, 409],
    handler: async ({ project, params }, svc) => {
      await svc.measurements.baseTimes.remove(project, params.measurement_uuid, params.type);
    },
  }),
];
