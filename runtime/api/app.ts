// The Koa application of the command API: decode every input through its schema, call the handler,
// render JSON; every failure becomes `{title, status, detail, instance}` and never a crash.
import Koa, { type Context } from "koa";
import Router from "@koa/router";
import { Either, ParseResult, Schema } from "effect";
import { SettingsError } from "../settings/service.js";
import { AgentError, badRequest, conflict, notFound } from "./errors.js";
import { readJson } from "./json-body.js";
import { buildOpenApi } from "./openapi.js";
import { METRICS_PATH } from "../../lib/metrics-listener.js";
import type { AnyRoute, ApiContext } from "./route.js";

export const BASE_PATH = "/api/v1";
const JSON_TYPE = "application/json; charset=UTF-8";

const koaPath = (p: string) => BASE_PATH + p.replace(/\{([^}]+)\}/g, ":$1");

const SECRET_FIELD = /secret|password|token/i;

/** Decodes `input`; failures become a 400 whose detail names the first offending field. */
export function decode<A, I>(schema: Schema.Schema<A, I, never>, input: unknown, where: string): A {
  const result = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(input);
  if (Either.isRight(result)) return result.right;
  // One message per field; an optional field's "Expected undefined" alternative says nothing useful.
  const byField = new Map<string, string>();
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(result.left)) {
    const field = issue.path.length ? issue.path.map(String).join(".").replace(/\.(\d+)(?=\.|$)/g, "[$1]") : where;
    // A secret's value is never quoted back (effect's `, actual "..."`): the rule is enough.
    const message = SECRET_FIELD.test(field) ? issue.message.replace(/, actual [\s\S]*$/, "") : issue.message;
    const useless = message.startsWith("Expected undefined");
    if (!byField.has(field) || (byField.get(field)!.startsWith("Expected undefined") && !useless)) byField.set(field, message);
  }
  const [first] = byField;
  if (!first) throw badRequest(`invalid ${where}`);
  const more = byField.size > 1 ? ` (also invalid: ${[...byField.keys()].slice(1).join(", ")})` : "";
  throw badRequest(`${first[0]}: ${first[1]}${more}`);
}

function send(ctx: Context, status: number, body: unknown) {
  ctx.status = status;
  if (body === undefined || status === 204) {
    ctx.body = null;
    return;
  }
  ctx.type = JSON_TYPE;
  ctx.body = JSON.stringify(body);
}

function toAgentError(err: unknown): AgentError {
  if (err instanceof AgentError) return err;
  if (err instanceof SettingsError) {
    if (err.kind === "not_found") return notFound(err.detail);
    if (err.kind === "conflict") return conflict(err.detail);
    if (err.kind === "forbidden") return new AgentError(403, "Forbidden", err.detail);
    return badRequest(err.detail);
  }
  const status = (err as { status?: unknown })?.status;
  if (typeof status === "number" && status >= 400 && status < 500) return new AgentError(status, "Bad request", String((err as Error).message));
  return new AgentError(500, "Internal error", "unexpected error; see the agent log");
}

export interface AppOptions {
  onError?: (err: unknown, ctx: Context) => void;
}

export function createApp(routes: AnyRoute[], api: ApiContext, options: AppOptions = {}): Koa {
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  const openapi = buildOpenApi(routes, BASE_PATH);
  router.get(BASE_PATH + "/openapi.json", (ctx) => send(ctx, 200, openapi));
  const metrics = api.metrics;
  if (metrics)
    router.get(BASE_PATH + METRICS_PATH, async (ctx) => {
      const { contentType, body } = await metrics();
      ctx.set("Cache-Control", "no-store");
      ctx.type = contentType;
      ctx.body = body;
    });
  // Literal segments first, so `/upstreams/-/states` wins over `/upstreams/{id}/...`.
  const sorted = [...routes].sort((a, b) => specificity(b.path) - specificity(a.path));
  for (const route of sorted) {
    router.register(koaPath(route.path), [route.method], async (ctx: Context) => {
      const params = route.params ? decode(route.params, ctx.params, "path") : {};
      const query = route.query ? decode(route.query, { ...ctx.query }, "query") : {};
      const body = route.body ? decode(route.body, await readJson(ctx), "body") : undefined;
      const result = await route.handler({ params, query, body }, api);
      send(ctx, route.success, result);
    });
  }
  app.use(async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) {
        const matched = router.match(ctx.path, ctx.method);
        if (matched.path.length > 0 && !matched.route) throw new AgentError(405, "Method not allowed", `${ctx.method} is not allowed on ${ctx.path}`);
        throw notFound(`no API at ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const e = toAgentError(err);
      if (e.status >= 500) options.onError?.(err, ctx);
      send(ctx, e.status, e.body(ctx.path));
    }
  });
  app.use(router.routes());
  return app;
}

function specificity(p: string): number {
  return p.split("/").reduce((n, seg, i) => n + (seg.startsWith("{") ? 0 : 1 / (i + 1)), 0);
}
