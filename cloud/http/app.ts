// The Koa application: one error renderer, routes, and 404/405 for the rest (request logs and metrics:
// access-log.ts and request-observer.ts, which also see the pre-routing fast paths).
import Koa from "koa";
import { notRouted, renderErrors } from "../../lib/http/mount.js";
import type { Services } from "../services.js";
import { metricsEndpoint } from "./metrics-endpoint.js";
import { mountRoutes } from "./mount.js";
import { createRouter } from "./router.js";
import { JSON_TYPE, type AnyRoute, type Reply } from "./route.js";

export function createApp(routes: AnyRoute[], svc: Services, renderError: (err: unknown, path: string) => Reply): Koa {
  const app = new Koa({ proxy: false });
  const router = createRouter();
  mountRoutes(router, routes, svc);
  app.use(renderErrors((err, ctx) => renderError(err, ctx.path), JSON_TYPE));
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
