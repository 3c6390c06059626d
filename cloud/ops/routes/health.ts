// Liveness and readiness probes for orchestrators and load balancers: public (no credentials, nothing
// secret in the answers) and cheap, so they can be polled every second. Why a part is not ready is told in
// full to a super user and to this host (as /metrics is), to others in plain words.
import * as Schema from "effect/Schema";
import { ApiError } from "../../http/api-error.js";
import { defineRoute } from "../../http/route.js";
import { isLocalClient } from "../../http/metrics-endpoint.js";
import { readiness, withoutDetails, type CheckName } from "../service/readiness.js";
import { Checks } from "../schemas.js";

export const TAG = "operations";

export const aliveRoute = defineRoute({
  operationId: "getHealthAlive",
  method: "GET",
  path: "/health/alive",
  tag: TAG,
  summary: "200 while the process serves requests",
  auth: "none",
  success: 200,
  response: Schema.Struct({ status: Schema.Literal("alive") }),
  handler: () => ({ status: "alive" as const }),
});

export const readyRoute = defineRoute({
  operationId: "getHealthReady",
  method: "GET",
  path: "/health/ready",
  tag: TAG,
  summary:
    "200 when the database answers, the iSCP broker accepts and storage has room and (with --nats) NATS is connected; else 503 naming what is not ready",
  auth: "none",
  success: 200,
  response: Schema.Struct({ status: Schema.Literal("ready"), checks: Checks }),
  errors: [503],
  handler: async ({ principal, ctx }, svc) => {
    const full = await readiness(svc);
    const r = principal?.isSuper || isLocalClient(ctx.req) ? full : withoutDetails(full);
    if (r.ready) return { status: "ready" as const, checks: r.checks };
    const failing = (Object.entries(r.checks) as Array<[CheckName, string]>).filter(([, v]) => v !== "ok");
    // A full disk alone gets the type of the 507 answers writes then get; anything else is plain unavailability.
    const type =
      failing.some(([k]) => k === "storage") && failing.length === 1 ? "insufficient_storage" : "service_unavailable";
    const title = `not ready: ${failing.map(([k, v]) => `${k}: ${v}`).join("; ")}`;
    throw new ApiError(503, type, title, { "Cache-Control": "no-store" }, Object.fromEntries(failing));
  },
});
