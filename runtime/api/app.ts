// The Koa application of the command API: decode every input through its schema, call the handler,
// render JSON; every failure becomes `{title, status, detail, instance}` and never a crash.
import Koa, { type Context } from "koa";
import Router from "@koa/router";
import type * as Schema from "effect/Schema";
import { decodeInput } from "../../lib/http/decode.js";
import { mountRoutes, notRouted, renderErrors, sendReply } from "../../lib/http/mount.js";
import { BodyTooLarge, HttpProblem, MethodNotAllowed, NoRoute } from "../../lib/http/problems.js";
import { Reply } from "../../lib/http/route.js";
import { SettingsError } from "../settings/service.js";
import { AgentError, badRequest, conflict, notFound } from "./agent-errors.js";
import { readJson } from "./json-body.js";
import { buildOpenApi, JSON_TYPE } from "./openapi.js";
import { METRICS_PATH } from "../../lib/metrics-listener.js";
import type { AnyRoute, ApiContext } from "./route.js";

export const BASE_PATH = "/api/v1";

const SECRET_FIELD = /secret|password|token/i;

/** Decodes `input`, refusing unknown keys; failures become a 400 whose detail names the first offending field. */
export function decode<A, I>(schema: Schema.Schema<A, I, never>, input: unknown, where: string): A {
  const result = decodeInput(schema, input, "error");
  if (result.ok) return result.value;
  // One message per field; an optional field's "Expected undefined" alternative says nothing useful.
  const byField = new Map<string, string>();
  for (const issue of result.issues) {
    const field = issue.path.length
      ? issue.path
          .map(String)
          .join(".")
          .replace(/\.(\d+)(?=\.|$)/g, "[$1]")
      : where;
    // A secret's value is never quoted back (effect's `, actual "..."`): the rule is enough.
    const message = SECRET_FIELD.test(field) ? issue.message.replace(/, actual [\s\S]*$/, "") : issue.message;
    const useless = message.startsWith("Expected undefined");
    if (!byField.has(field) || (byField.get(field)!.startsWith("Expected undefined") && !useless))
      byField.set(field, message);
  }
  const [first] = byField;
  if (!first) throw badRequest(`invalid ${where}`);
  const more = byField.size > 1 ? ` (also invalid: ${[...byField.keys()].slice(1).join(", ")})` : "";
  throw badRequest(`${first[0]}: ${first[1]}${more}`);
}

/** The API's one error mapping: settings errors, the kit's problems, Koa's client errors, else 500. */
function toAgentError(err: unknown): AgentError {
  if (err instanceof AgentError) return err;
  if (err instanceof SettingsError) {
    if (err.kind === "not_found") return notFound(err.detail);
    if (err.kind === "conflict") return conflict(err.detail);
    if (err.kind === "forbidden") return new AgentError(403, "Forbidden", err.detail);
    return badRequest(err.detail);
  }
  if (err instanceof NoRoute) return notFound(err.message);
  if (err instanceof MethodNotAllowed)
    return new AgentError(405, "Method not allowed", `${err.method} is not allowed on ${err.path}`, err.headers);
  if (err instanceof BodyTooLarge)
    return new AgentError(413, "Payload too large", `body: larger than ${err.limit} bytes`);
  if (err instanceof HttpProblem) return badRequest(`body: ${err.message}`);
  const status = (err as { status?: unknown })?.status;
  if (typeof status === "number" && status >= 400 && status < 500)
    return new AgentError(status, "Bad request", String((err as Error).message));
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
  router.get(BASE_PATH + "/openapi.json", (ctx) => sendReply(ctx, new Reply(200, openapi), JSON_TYPE));
  const metrics = api.metrics;
  if (metrics)
    router.get(BASE_PATH + METRICS_PATH, async (ctx) => {
      const { contentType, body } = await metrics();
      ctx.set("Cache-Control", "no-store");
      ctx.type = contentType;
      ctx.body = body;
    });
  mountRoutes(router, BASE_PATH, routes, (route) => async (ctx) => {
    const params = route.params ? decode(route.params, ctx.params, "path") : {};
    const query = route.query ? decode(route.query, { ...ctx.query }, "query") : {};
    const body = route.body ? decode(route.body, await readJson(ctx), "body") : undefined;
    const result = await route.handler({ params, query, body }, api);
    sendReply(ctx, new Reply(route.success, result), JSON_TYPE);
  });
  const render = (err: unknown, ctx: Context) => {
    const e = toAgentError(err);
    if (e.status >= 500) options.onError?.(err, ctx);
    return new Reply(e.status, e.body(ctx.path), e.headers);
  };
  app.use(renderErrors(render, JSON_TYPE));
  app.use(notRouted(router));
  app.use(router.routes());
  return app;
}
