// The Koa application: one error renderer, routes, and 404/405 for the rest (request logs and metrics:
// access-log.ts and request-observer.ts, which also see the token fast path).
import Koa, { type Context } from "koa";
import Router from "@koa/router";
import type { Services } from "../services.js";
import { isStorageFull } from "../storage/db.js";
import { ApiError, storageFull } from "./errors.js";
import { metricsEndpoint } from "./metrics-endpoint.js";
import { mountRoutes, notRouted } from "./mount.js";
import type { AnyRoute } from "./route.js";

function renderError(ctx: Context, err: ApiError) {
  ctx.status = err.status;
  for (const [k, v] of Object.entries(err.headers ?? {})) ctx.set(k, v);
  ctx.type = "application/json; charset=utf-8";
  ctx.body = JSON.stringify(err.toBody());
}

export function errorRenderer(svc: Services) {
  return async (ctx: Context, next: () => Promise<void>) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof ApiError) renderError(ctx, err);
      else if (isClientError(err)) renderError(ctx, new ApiError(err.status, "invalid_request", err.expose ? err.message : "bad request"));
      else if (isStorageFull(err)) {
        svc.storageRoom.noteFull();
        svc.log.error({ err: (err as Error).message, path: ctx.path }, "storage full");
        renderError(ctx, storageFull());
      } else {
        svc.log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack }, path: ctx.path }, "unhandled error");
        renderError(ctx, new ApiError(500, "internal_error", "unexpected server error"));
      }
    }
  };
}

const isClientError = (err: unknown): err is { status: number; expose: boolean; message: string } =>
  typeof err === "object" && err !== null && typeof (err as { status?: unknown }).status === "number" &&
  (err as { status: number }).status >= 400 && (err as { status: number }).status < 500;

export function createApp(routes: AnyRoute[], svc: Services): Koa {
  const app = new Koa({ proxy: false });
  const router = new Router();
  mountRoutes(router, routes, svc);
  app.use(errorRenderer(svc));
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
