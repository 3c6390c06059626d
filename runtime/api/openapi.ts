// OpenAPI 3.1 document generated from the RouteDefs (and their schemas) that serve and validate requests.
import { JSONSchema, Schema, SchemaAST } from "effect";
import { API_VERSION, ErrorBody } from "../settings/schemas.js";
import type { AnyRoute } from "./route.js";

type Json = Record<string, unknown>;

/**
 * JSONSchema.make puts named schemas (those with an identifier) in `$defs`; they are moved to
 * components/schemas and the references rewritten, so each named schema appears once.
 */
function jsonSchema(schema: Schema.Schema.Any, defs: Json): Json {
  const s = JSONSchema.make(schema as Schema.Schema<unknown, unknown>, { target: "openApi3.1" }) as unknown as Json;
  delete s.$schema;
  const local = (s.$defs ?? {}) as Json;
  delete s.$defs;
  for (const [name, def] of Object.entries(local)) defs[name] = rewriteRefs(def);
  return rewriteRefs(s) as Json;
}

function rewriteRefs(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(rewriteRefs);
  if (v === null || typeof v !== "object") return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) {
    out[k] = k === "$ref" && typeof x === "string" ? x.replace("#/$defs/", "#/components/schemas/") : rewriteRefs(x);
  }
  return out;
}

function fieldsOf(schema: Schema.Schema.Any, defs: Json) {
  let ast = schema.ast;
  while (SchemaAST.isTransformation(ast) || SchemaAST.isRefinement(ast)) ast = ast.from;
  if (!SchemaAST.isTypeLiteral(ast)) return [];
  return ast.propertySignatures.map((p) => ({
    name: String(p.name),
    optional: p.isOptional,
    schema: jsonSchema(Schema.make(withoutUndefined(p.type)), defs),
  }));
}

/** `Schema.optional` adds `undefined` to a property's type; a parameter is optional by `required` instead. */
function withoutUndefined(ast: SchemaAST.AST): SchemaAST.AST {
  if (!SchemaAST.isUnion(ast)) return ast;
  const types = ast.types.filter((t) => !SchemaAST.isUndefinedKeyword(t));
  return types.length === 1 ? types[0]! : SchemaAST.Union.make(types);
}

const JSON_TYPE = "application/json; charset=UTF-8";

function operation(route: AnyRoute, defs: Json): Json {
  const parameters = [
    ...(route.params ? fieldsOf(route.params, defs).map((f) => ({ name: f.name, in: "path", required: true, schema: f.schema })) : []),
    ...(route.query ? fieldsOf(route.query, defs).map((f) => ({ name: f.name, in: "query", required: !f.optional, schema: f.schema })) : []),
  ];
  const responses: Json = {
    [String(route.success)]: {
      description: "success",
      ...(route.response ? { content: { [JSON_TYPE]: { schema: jsonSchema(route.response, defs) } } } : {}),
    },
  };
  for (const status of new Set([400, ...(route.errors ?? [])]))
    responses[String(status)] = {
      description: status === 404 ? "Resource is not found" : status === 409 ? "conflict" : "invalid request",
      content: { [JSON_TYPE]: { schema: { $ref: "#/components/schemas/Error" } } },
    };
  const op: Json = { operationId: route.operationId, tags: [route.tag], summary: route.summary, responses };
  if (parameters.length) op.parameters = parameters;
  if (route.body) op.requestBody = { required: true, content: { [JSON_TYPE]: { schema: jsonSchema(route.body, defs) } } };
  return op;
}

export function buildOpenApi(routes: AnyRoute[], basePath: string): Json {
  const defs: Json = {};
  jsonSchema(ErrorBody, defs);
  const paths: Record<string, Json> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, defs);
  return {
    openapi: "3.1.0",
    info: {
      title: "Edge agent command API",
      version: API_VERSION,
      description: "Local command API of the edge agent, served over a Unix domain socket (base URL http://unix/api/v1).",
    },
    servers: [{ url: `http://unix${basePath}` }],
    paths,
    components: { schemas: defs },
  };
}
