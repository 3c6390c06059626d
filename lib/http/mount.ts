// Routes onto a @koa/router in a safe order, the answer for requests no route takes (404, or 405 with
// Allow), and writing a Reply to Koa's context.
import type Router from "@koa/router";
import type { Context, Middleware } from "koa";
import { MethodNotAllowed, NoRoute } from "./problems.js";
import { Reply } from "./route.js";

/** `/users/{user_uuid}` under `/api` becomes the router's `/api/users/:user_uuid`. */
export const routerPath = (prefix: string, p: string) => prefix + p.replace(/\{([^}]+)\}/g, ":$1");

/** Static segments before parameters, so `/users/me` wins over `/users/{user_uuid}`. */
export function bySpecificity(a: { path: string }, b: { path: string }): number {
  const sa = a.path.split("/");
  const sb = b.path.split("/");
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const pa = sa[i]!.startsWith("{");
    const pb = sb[i]!.startsWith("{");
    if (pa !== pb) return pa ? 1 : -1;
  }
  // Lengths break ties so the order is total (Array.sort needs a consistent comparator).
  return sa.length - sb.length;
}

/** Registers each route (most specific first) with the middleware `handle` makes for it. */
export function mountRoutes<R extends { method: string; path: string; operationId: string }>(
  router: Router,
  prefix: string,
  routes: R[],
  handle: (route: R) => (ctx: Context) => Promise<void>,
): void {
  for (const route of [...routes].sort(bySpecificity)) {
    router.register(routerPath(prefix, route.path), [route.method], handle(route), { name: route.operationId });
  }
}

/** Throws NoRoute, or MethodNotAllowed when other methods exist at the path, for requests no route handled. */
export function notRouted(router: Router): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body != null) return;
    const matched = router.match(ctx.path, ctx.method);
    const methods = new Set(matched.path.flatMap((l) => l.methods).filter((m) => m !== "HEAD"));
    if (methods.size > 0 && !matched.route) throw new MethodNotAllowed(ctx.method, ctx.path, [...methods]);
    throw new NoRoute(ctx.method, ctx.path);
  };
}

/**
 * Writes a reply. Buffers and streams go out as they are; strings of a non-JSON type as text;
 * anything else as JSON. The media type is the reply's, else the route's, else `jsonType` (or
 * octet-stream for bytes). An undefined body (or 204/304) sends none.
 */
export function sendReply(ctx: Context, r: Reply, jsonType: string, routeType?: string): void {
  ctx.status = r.status;
  for (const [k, v] of Object.entries(r.headers)) ctx.set(k, v);
  if (r.body === undefined || r.status === 204 || r.status === 304) {
    ctx.body = null;
    return;
  }
  if (Buffer.isBuffer(r.body) || typeof (r.body as NodeJS.ReadableStream).pipe === "function") {
    ctx.type = r.contentType ?? routeType ?? "application/octet-stream";
    ctx.body = r.body;
    return;
  }
  ctx.type = r.contentType ?? routeType ?? jsonType;
  ctx.body = typeof r.body === "string" && !ctx.type.includes("json") ? r.body : JSON.stringify(r.body);
}

/** Turns whatever a request threw into a Reply: the one place an API's error shape is decided. */
export type ErrorRenderer = (err: unknown, ctx: Context) => Reply;

/** The outermost middleware: every failure below it is answered by `render`, never by Koa's default page. */
export function renderErrors(render: ErrorRenderer, jsonType: string): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      sendReply(ctx, render(err, ctx), jsonType);
    }
  };
}
