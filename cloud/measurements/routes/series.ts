// GET /v1/projects/{p}/measurements/{m}/series: one numeric data ID of a measurement reduced to
// min/max per time bucket, sized to a plot (the console asks again for a finer slice on zoom).
import { dual } from "./dual-route.js";
import { reducedSeries } from "../service/reduced-series.js";
import { MeasParams, SeriesQuery, SeriesResponse } from "../schemas.js";

export const seriesRoutes = dual({
  projectOp: "getProjectMeasurementReducedSeries",
  method: "GET",
  path: "/measurements/{measurement_uuid}/series",
  summary:
    "A numeric data ID (float*/int*/uint* big-endian, or json with an optional numeric field) of a measurement, " +
    "reduced to the smallest and largest value (with their times) of each of `buckets` equal time buckets in [start, end)",
  params: MeasParams,
  query: SeriesQuery,
  success: 200,
  response: SeriesResponse,
  errors: [400, 404],
  handler: ({ project, params, query: q }, svc) =>
    reducedSeries(
      { db: svc.db, files: svc.measurements.measurements.files },
      {
        project,
        measurement: params.measurement_uuid,
        dataType: q.data_type,
        dataId: q.data_id,
        field: q.field,
        startNs: q.start,
        endNs: q.end,
        buckets: q.buckets,
      },
    ),
});
