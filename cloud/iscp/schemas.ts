// The iSCP area's REST responses (intdash REST API: listProjectEdgeConnections).
import * as Schema from "effect/Schema";
import { RATE_WINDOW_SECONDS } from "./broker/rate-meter.js";

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

export const EdgeConnections = Schema.Struct({
  items: Schema.Array(EdgeConnection),
  page: Schema.Struct({ total_count: Schema.Int }),
});
