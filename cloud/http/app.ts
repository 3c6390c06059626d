// The Koa application: request logs, one error renderer, routes, and 404/405 for the rest.
import Koa, { type Context } from "koa";
import Router from "@koa/router";
import { notRouted, renderErrors } from "../../lib/http/mount.js";
import type { Services } from "../services.js";
import { errorReply } from "./error-reply.js";
import { mountRoutes } from "./mount.js";
import { JSON_TYPE, type AnyRoute } from "./route.js";

function requestLog(svc: Services) {
  return async (ctx: Context, next: () => Promise<void>) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      svc.log.debug({ method: ctx.method, path: ctx.path, status: ctx.status, ms: +(performance.now() - started).toFixed(1) }, "request");
    }
  };
}

export function createApp(routes: AnyRoute[], svc: Services): Koa {
  const app = new Koa({ proxy: false });
  const router = new Router();
  mountRoutes(router, routes, svc);
  app.use(requestLog(svc));
  app.use(renderErrors((err, ctx) => errorReply(err, svc.log, ctx.path), JSON_TYPE));
  app.use(async (ctx, next) => {
    ctx.set("X-Content-Type-Options", "nosniff");
    await next();
  });
  app.use(notRouted(router));
  app.use(router.routes());
  // Koa would otherwise log errors to stderr itself; ours are rendered and logged above.
  app.silent = true;
  return app;
}
