// `GET /metrics` (Prometheus text format). On the main port it is served to a super user's credentials, or
// to a client on this host: a loopback peer whose request carries no forwarding header (a reverse proxy on
// the same host adds one, so remote clients behind it are not taken for local ones). With --metrics-listen
// it is also served, to anyone who reaches that address, on a listener of its own (lib/metrics-listener.ts).
import type http from "node:http";
import type { Context } from "koa";
import { METRICS_PATH } from "../../lib/metrics-listener.js";
import type { Services } from "../services.js";
import { Forbidden, Unauthenticated } from "../errors.js";
import { ApiError } from "./api-error.js";
import { authenticate } from "./mount.js";
import { noteRoute } from "./request-observer.js";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/i;

/** A client on this host, not relayed by a proxy (which would add one of these headers). */
export function isLocalClient(req: http.IncomingMessage): boolean {
  const h = req.headers;
  return (
    LOOPBACK.test(req.socket.remoteAddress ?? "") &&
    h["x-forwarded-for"] === undefined &&
    h.forwarded === undefined &&
    h["x-real-ip"] === undefined
  );
}

/** Koa middleware answering `/metrics` on the main port. */
export function metricsEndpoint(svc: Services) {
  return async (ctx: Context, next: () => Promise<void>) => {
    if (ctx.path !== METRICS_PATH) return next();
    noteRoute(ctx.req, METRICS_PATH);
    if (ctx.method !== "GET" && ctx.method !== "HEAD")
      throw new ApiError(405, "method_not_allowed", `method ${ctx.method} is not allowed here`, { Allow: "GET" });
    if (!isLocalClient(ctx.req)) {
      const principal = await authenticate(ctx, svc);
      if (!principal)
        throw new Unauthenticated(
          "the metrics need a super user's credentials, or a request from this host, or --metrics-listen",
        );
      if (!principal.isSuper)
        throw new Forbidden("the metrics are served to super users only (or from this host, or on --metrics-listen)");
    }
    const { contentType, body } = await svc.metrics.exposition();
    ctx.set("Cache-Control", "no-store");
    ctx.type = contentType;
    ctx.body = body;
  };
}
