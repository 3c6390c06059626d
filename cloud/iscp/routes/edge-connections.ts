// GET /v1/projects/{project_uuid}/edge_connections (intdash REST API: listProjectEdgeConnections): the
// iSCP connections open now in the project, one per connected node (an edge's node ID is its UUID).
import * as Schema from "effect/Schema";
import { defineRoute } from "../../http/route.js";
import { Uuid } from "../../measurements/schemas.js";
import { EdgeConnections } from "../schemas.js";

export const edgeConnectionsRoute = defineRoute({
  operationId: "listProjectEdgeConnections",
  method: "GET",
  path: "/v1/projects/{project_uuid}/edge_connections",
  tag: "broker_ISCP",
  summary: "The edges connected to the iSCP broker in the project now, with their transport and open streams",
  params: Schema.Struct({ project_uuid: Uuid }),
  success: 200,
  response: EdgeConnections,
  handler: ({ params }, svc) => {
    const items = svc.iscp.connections.list(params.project_uuid.toLowerCase());
    return { items, page: { total_count: items.length } };
  },
});
