// The Koa application: one error renderer, routes, and 404/405 for the rest (request logs and metrics:
// access-log.ts and request-observer.ts, which also see the token fast path).
import Koa from "koa";
import Router from "@koa/router";
import { notRouted, renderErrors } from "../../lib/http/mount.js";
import type { Services } from "../services.js";
import { isStorageFull } from "../storage/db.js";
import { errorReply } from "./error-reply.js";
import { metricsEndpoint } from "./metrics-endpoint.js";
import { mountRoutes } from "./mount.js";
import { JSON_TYPE, type AnyRoute } from "./route.js";

export function createApp(routes: AnyRoute[], svc: Services): Koa {
  const app = new Koa({ proxy: false });
  const router = new Router();
  mountRoutes(router, routes, svc);
  app.use(
    renderErrors((err, ctx) => {
      // The readiness probe reports a full disk until a write succeeds again.
      if (isStorageFull(err)) svc.storageRoom.noteFull();
      return errorReply(err, svc.log, ctx.path);
    }, JSON_TYPE),
  );
  app.use(async (ctx, next) => {
    ctx.set("X-Content-Type-Options", "nosniff");
    await next();
  });
  app.use(metricsEndpoint(svc));
  app.use(notRouted(router));
  app.use(router.routes());
  // Koa would otherwise log errors to stderr itself; ours are rendered and logged above.
  app.silent = true;
  return app;
}
