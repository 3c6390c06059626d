// The cloud's part of routing: authenticate, guard, decode params/query/body, call, render.
import type Router from "@koa/router";
import type { Context } from "koa";
import { readBody } from "../../lib/http/body.js";
import { mountRoutes as mountKitRoutes, sendReply } from "../../lib/http/mount.js";
import type { Principal } from "../auth/principal.js";
import { Forbidden, Unauthenticated } from "../errors.js";
import type { Services } from "../services.js";
import { decodeOrThrow } from "./decode.js";
import { normaliseQuery } from "./query.js";
import { JSON_TYPE, Reply, type AnyRoute } from "./route.js";
import { notePrincipal, noteRoute } from "./request-observer.js";

export const API_PREFIX = "/api";

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
  if (!principal) throw new Unauthenticated();
  const apiPath = ctx.path.slice(API_PREFIX.length);
  if (principal.restricted === "password_change" && !isPasswordChange(ctx.method, apiPath))
    throw new Forbidden("the password is temporary or expired: change it first (PUT /api/auth/users/me/password)");
  if (mode === "guard") {
    const allowed = await svc.access.allows(principal, ctx.method, apiPath);
    svc.metrics.accessChecked(allowed);
    if (!allowed) throw new Forbidden();
  }
  return principal;
}

const isPasswordChange = (method: string, path: string) =>
  (method === "PUT" && path === "/auth/users/me/password") ||
  (method === "POST" && path === "/auth/users/me/password/check") ||
  (method === "GET" && path === "/auth/users/me");

export function mountRoutes(router: Router, routes: AnyRoute[], svc: Services): void {
  mountKitRoutes(router, API_PREFIX, routes, (route) => async (ctx) => {
    noteRoute(ctx.req, route.path);
    const principal = await guard(route, ctx, svc);
    const params = route.params ? decodeOrThrow(route.params, ctx.params, "path parameter") : {};
    const query = route.query ? decodeOrThrow(route.query, normaliseQuery(ctx.query), "query") : {};
    let body: unknown;
    if (route.body) {
      const kind = route.bodyKind ?? "json";
      const raw = route.readBody
        ? await route.readBody(ctx.req)
        : await readBody(ctx.req, kind, route.bodyLimit ?? svc.config.bodyLimit);
      // Form bodies are OAuth endpoints, whose RFCs say unknown parameters are ignored.
      body = kind === "raw" ? raw : decodeOrThrow(route.body, raw, "body", { refuseUnknown: kind === "json" });
    }
    const result = await route.handler({ params, query, body, principal, ctx }, svc);
    sendReply(
      ctx,
      result instanceof Reply ? result : new Reply(route.success, result),
      JSON_TYPE,
      route.responseMediaType,
    );
  });
}
