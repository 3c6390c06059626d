// Turns RouteDefs into Koa middleware: authenticate, guard, decode params/query/body, call, render.
import Router from "@koa/router";
import type { Context } from "koa";
import type { Principal } from "../auth/principal.js";
import type { Services } from "../services.js";
import { readBody } from "./body.js";
import { decodeOrThrow } from "./decode.js";
import { ApiError, forbidden, unauthorized } from "./errors.js";
import { normaliseQuery } from "./query.js";
import { notePrincipal, noteRoute } from "./request-observer.js";
import { Reply, type AnyRoute } from "./route.js";

export const API_PREFIX = "/api";

export const koaPath = (p: string) => API_PREFIX + p.replace(/\{([^}]+)\}/g, ":$1");

/** Static segments before parameters, so `/users/me` wins over `/users/{user_uuid}`. */
export function bySpecificity(a: AnyRoute, b: AnyRoute): number {
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

export async function authenticate(ctx: Context, svc: Services): Promise<Principal | undefined> {
  for (const authenticator of svc.authenticators) {
    const p = await authenticator(ctx);
    if (p) return p;
  }
  return undefined;
}

async function guard(route: AnyRoute, ctx: Context, svc: Services): Promise<Principal | undefined> {
  const mode = route.auth ?? "guard";
  const principal = await authenticate(ctx, svc);
  notePrincipal(ctx.req, principal);
  if (mode === "none") return principal;
  if (!principal) throw unauthorized();
  const apiPath = ctx.path.slice(API_PREFIX.length);
  if (principal.restricted === "password_change" && !isPasswordChange(ctx.method, apiPath))
    throw forbidden("the password is temporary or expired: change it first (PUT /api/auth/users/me/password)");
  if (mode === "guard") {
    const allowed = await svc.access.allows(principal, ctx.method, apiPath);
    svc.metrics.accessChecked(allowed);
    if (!allowed) throw forbidden();
  }
  return principal;
}

const isPasswordChange = (method: string, path: string) =>
  (method === "PUT" && path === "/auth/users/me/password") ||
  (method === "POST" && path === "/auth/users/me/password/check") ||
  (method === "GET" && path === "/auth/users/me");

function render(ctx: Context, route: AnyRoute, result: unknown) {
  const r = result instanceof Reply ? result : new Reply(route.success, result);
  ctx.status = r.status;
  for (const [k, v] of Object.entries(r.headers)) ctx.set(k, v);
  if (r.body === undefined || r.status === 204 || r.status === 304) {
    ctx.body = null;
    return;
  }
  if (Buffer.isBuffer(r.body) || typeof (r.body as NodeJS.ReadableStream).pipe === "function") {
    ctx.type = r.contentType ?? route.responseMediaType ?? "application/octet-stream";
    ctx.body = r.body;
    return;
  }
  ctx.type = r.contentType ?? route.responseMediaType ?? "application/json; charset=utf-8";
  ctx.body = typeof r.body === "string" && !ctx.type.includes("json") ? r.body : JSON.stringify(r.body);
}

export function mountRoutes(router: Router, routes: AnyRoute[], svc: Services): void {
  for (const route of [...routes].sort(bySpecificity)) {
    router.register(koaPath(route.path), [route.method], async (ctx: Context) => {
      noteRoute(ctx.req, route.path);
      const principal = await guard(route, ctx, svc);
      const params = route.params ? decodeOrThrow(route.params, ctx.params, "path parameter") : {};
      const query = route.query ? decodeOrThrow(route.query, normaliseQuery(ctx.query), "query") : {};
      let body: unknown = undefined;
      if (route.body) {
        const kind = route.bodyKind ?? "json";
        const raw = await readBody(ctx, kind, route.bodyLimit ?? svc.config.bodyLimit);
        // Form bodies are OAuth endpoints, whose RFCs say unknown parameters are ignored.
        body = kind === "raw" ? raw : decodeOrThrow(route.body, raw, "body", { refuseUnknown: kind === "json" });
      }
      const result = await route.handler({ params, query, body, principal, ctx }, svc);
      render(ctx, route, result);
    }, { name: route.operationId });
  }
}

/** 404 or 405 (with Allow) for requests no route handled. */
export function notRouted(router: Router) {
  return async (ctx: Context, next: () => Promise<void>) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const matched = router.match(ctx.path, ctx.method);
    const methods = new Set(matched.path.flatMap((l) => l.methods).filter((m) => m !== "HEAD"));
    if (methods.size > 0 && !matched.route) {
      throw new ApiError(405, "method_not_allowed", `method ${ctx.method} is not allowed here`, undefined, {
        Allow: [...methods].join(", "),
      });
    }
    throw new ApiError(404, "not_found", `no API at ${ctx.method} ${ctx.path}`);
  };
}
