// GET /v1/projects/{project_uuid}/edge_connections (intdash REST API: listProjectEdgeConnections): the
// iSCP connections open now in the project, one per connected node (an edge's node ID is its UUID).
import { Schema } from "effect";
import { defineRoute } from "../../http/route.js";
import { Uuid } from "../../measurements/schemas.js";
import { RATE_WINDOW_SECONDS } from "../broker/rate-meter.js";

const EdgeConnection = Schema.Struct({
  edge_uuid: Schema.String,
  transport: Schema.String,
  upstreams: Schema.Int,
  downstreams: Schema.Int,
  data_rate: Schema.Struct({
    points_per_second: Schema.Number,
    bytes_per_second: Schema.Number.annotations({
      description: "Payload bytes of the data points (not the protocol's framing)",
    }),
  }).annotations({
    description:
      `Received on this connection's upstreams over the last ${RATE_WINDOW_SECONDS} seconds, measured by the peer the edge is connected to ` +
      "(in a cluster every peer lists the connections of all peers; another peer's figures are up to about a second old)",
  }),
});

export const edgeConnectionsRoute = defineRoute({
  operationId: "listProjectEdgeConnections",
  method: "GET",
  path: "/v1/projects/{project_uuid}/edge_connections",
  tag: "broker_ISCP",
  summary: "The edges connected to the iSCP broker in the project now, with their transport and open streams",
  params: Schema.Struct({ project_uuid: Uuid }),
  success: 200,
  response: Schema.Struct({ items: Schema.Array(EdgeConnection), page: Schema.Struct({ total_count: Schema.Int }) }),
  handler: ({ params }, svc) => {
    const items = svc.iscp?.connections.list(params.project_uuid.toLowerCase()) ?? [];
    return { items, page: { total_count: items.length } };
  },
});
