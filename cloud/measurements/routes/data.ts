// GET /v1/projects/{p}/data: data points streamed as NDJSON or as length-prefixed DataResponseProto.
import { Readable } from "node:stream";
import { reply } from "../../http/route.js";
import type { Services } from "../../services.js";
import { isUuid } from "../formats/codec.js";
import { streamData } from "../service/data-stream.js";
import { dual } from "./dual-route.js";
import { basetimeNs } from "../service/model.js";
import { measurementsForName } from "../repo/measurement-list.js";
import { dataIdsOf } from "../repo/sequences.js";
import { DataIdsQuery, DataQuery } from "../schemas.js";

/** application/protobuf when the client asks for it (and not for JSON first); NDJSON otherwise. */
export function wantsProtobuf(accept: string): boolean {
  const types = accept.split(",").map((t) => t.split(";")[0]!.trim().toLowerCase());
  const pb = types.findIndex(
    (t) => t === "application/protobuf" || t === "application/x-protobuf" || t === "application/vnd.iscp.v2.protobuf",
  );
  const json = types.indexOf("application/json");
  return pb >= 0 && (json < 0 || pb < json);
}

/** A name that is not a UUID may be an edge's name: it stands for that edge's UUID. */
async function resolveName(svc: Services, name: string): Promise<string> {
  if (isUuid(name)) return name;
  const found = await svc.org.edges.list(
    { names: [`"${name}"`] },
    { key: "name", desc: false },
    { page: 1, perPage: 1 },
  );
  return found.items[0]?.uuid ?? name;
}

export const dataRoutes = [
  ...dual({
    projectOp: "listProjectDataPoints",
    legacyOp: "listDataPoints",
    method: "GET",
    path: "/data",
    summary: "Data points of a measurement (name = measurement UUID or edge UUID), streamed",
    query: DataQuery,
    success: 200,
    responseMediaType: "application/json; charset=utf-8",
    handler: async ({ project, query: q, ctx }, svc) => {
      const protobuf = wantsProtobuf(ctx.get("accept"));
      const gen = streamData(
        { db: svc.db, files: svc.measurements.measurements.files },
        {
          project,
          name: await resolveName(svc, q.name),
          idq: q["idq[]"],
          dataIdFilter: [...(q.data_id_filter ?? []), ...(q["data_id_filter[]"] ?? [])],
          startNs: q.start,
          endNs: q.end,
          since: q.since !== undefined ? new Date(Number(q.since / 1_000_000n)).toISOString() : undefined,
          limit: q.limit === 0 ? undefined : q.limit,
          desc: q.order === "desc",
          timeFormat: q.time_format,
          format: protobuf ? "protobuf" : "json",
          exitOnError: q.exit_on_error,
        },
        svc.log,
      );
      return reply(
        200,
        Readable.from(gen, { objectMode: false }),
        {},
        protobuf ? "application/protobuf" : "application/json; charset=utf-8",
      );
    },
  }),
  ...dual({
    projectOp: "listProjectDataPointDataIDs",
    method: "GET",
    path: "/data_ids",
    summary:
      "Data IDs (data_type, data_id) stored in a measurement, or in an edge's measurements with base time in [start, end)",
    query: DataIdsQuery,
    success: 200,
    handler: async ({ project, query: q }, svc) => {
      let ms = await measurementsForName(svc.db, project, await resolveName(svc, q.name));
      if (!(ms.length === 1 && ms[0]!.uuid === q.name.toLowerCase()))
        ms = ms.filter(
          (m) => (q.start === undefined || basetimeNs(m) >= q.start) && (q.end === undefined || basetimeNs(m) < q.end),
        );
      return {
        items: await dataIdsOf(
          svc.db,
          ms.map((m) => m.uuid),
        ),
      };
    },
  }),
];
