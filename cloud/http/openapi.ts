// OpenAPI 3.1 generated from the very RouteDefs (and schemas) that serve and validate requests.
import { JSONSchema, Schema, SchemaAST } from "effect";
import type { AnyRoute } from "./route.js";

type Json = Record<string, unknown>;

const ErrorBody = Schema.Struct({
  type: Schema.String,
  title: Schema.String,
  properties: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
});

/** Named sub-schemas (e.g. `Int`) land in components.schemas, so every `$ref` resolves in the document. */
type Definitions = Record<string, Json>;
const DEFINITION_PATH = "#/components/schemas/";

function jsonSchema(ast: SchemaAST.AST, defs: Definitions, opts: { allowExtraKeys?: boolean } = {}): Json {
  try {
    return JSONSchema.fromAST(ast, {
      definitions: defs as unknown as Record<string, JSONSchema.JsonSchema7>,
      definitionPath: DEFINITION_PATH,
      target: "openApi3.1",
      // Form bodies (OAuth endpoints) ignore unknown keys, so the document must not forbid them there.
      additionalPropertiesStrategy: opts.allowExtraKeys ? "allow" : "strict",
    }) as unknown as Json;
  } catch {
    // Transformations without a JSON Schema form (e.g. Buffer bodies) are described loosely.
    return {};
  }
}

/** A parameter's schema: its decoded form (integer, boolean, enum, array), without the `undefined` of optional keys. */
function parameterSchema(type: SchemaAST.AST, defs: Definitions): Json {
  let ast = type;
  if (SchemaAST.isUnion(ast)) {
    const present = ast.types.filter((t) => !SchemaAST.isUndefinedKeyword(t));
    if (present.length === 1) ast = present[0]!;
  }
  const decoded = jsonSchema(SchemaAST.typeAST(ast), defs);
  return Object.keys(decoded).length > 0 ? decoded : jsonSchema(SchemaAST.encodedAST(ast), defs);
}

function fieldsOf(schema: Schema.Schema.Any, defs: Definitions): Array<{ name: string; optional: boolean; schema: Json }> {
  let ast = schema.ast;
  while (SchemaAST.isTransformation(ast) || SchemaAST.isRefinement(ast)) ast = ast.from;
  if (!SchemaAST.isTypeLiteral(ast)) return [];
  return ast.propertySignatures.map((p) => ({
    name: String(p.name),
    optional: p.isOptional,
    schema: parameterSchema(p.type, defs),
  }));
}

const defaultMediaTypes = (route: AnyRoute) =>
  route.bodyMediaTypes ??
  (route.bodyKind === "form"
    ? ["application/x-www-form-urlencoded"]
    : route.bodyKind === "raw"
      ? ["application/octet-stream"]
      : ["application/json"]);

function operation(route: AnyRoute, defs: Definitions): Json {
  const parameters = [
    ...(route.params ? fieldsOf(route.params, defs).map((f) => ({ name: f.name, in: "path", required: true, schema: f.schema })) : []),
    ...(route.query ? fieldsOf(route.query, defs).map((f) => ({ name: f.name, in: "query", required: !f.optional, schema: f.schema })) : []),
  ];
  const responses: Json = {};
  const successContent = route.response
    ? { [route.responseMediaType ?? "application/json; charset=utf-8"]: { schema: jsonSchema(route.response.ast, defs) } }
    : undefined;
  responses[String(route.success)] = { description: "success", ...(successContent ? { content: successContent } : {}) };
  for (const status of route.alsoSuccess ?? []) responses[String(status)] = { description: status === 304 ? "not modified" : "success" };
  const errorStatuses = new Set([400, ...(route.auth === "none" ? [] : [401, 403]), ...(route.errors ?? [])]);
  for (const status of errorStatuses)
    responses[String(status)] = {
      description: "error",
      content: { "application/json; charset=utf-8": { schema: { $ref: "#/components/schemas/ErrorProblem" } } },
    };
  const op: Json = { operationId: route.operationId, tags: [route.tag], summary: route.summary ?? route.operationId, responses };
  if (parameters.length) op.parameters = parameters;
  if (route.body) {
    const schema = route.bodyKind === "raw" ? { type: "string", format: "binary" } : jsonSchema(route.body.ast, defs, { allowExtraKeys: route.bodyKind === "form" });
    op.requestBody = { required: true, content: Object.fromEntries(defaultMediaTypes(route).map((m) => [m, { schema }])) };
  }
  op.security = route.auth === "none" ? [] : [{ IntdashToken: [] }, { ServiceToken: [] }, { OAuth2TokenInHeader: [] }, { OAuth2TokenInCookie: [] }];
  return op;
}

export function buildOpenApi(routes: AnyRoute[], info: { title: string; version: string; serverUrl: string }): Json {
  const paths: Record<string, Json> = {};
  const defs: Definitions = {};
  const errorProblem = jsonSchema(ErrorBody.ast, defs);
  for (const route of routes) {
    if (route.hidden) continue;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, defs);
  }
  return {
    openapi: "3.1.0",
    info: { title: info.title, version: info.version },
    servers: [{ url: `${info.serverUrl}/api` }],
    paths,
    components: {
      schemas: { ...defs, ErrorProblem: errorProblem },
      securitySchemes: {
        IntdashToken: { type: "apiKey", in: "header", name: "X-Intdash-Token" },
        ServiceToken: { type: "apiKey", in: "header", name: "X-Service-Token" },
        OAuth2TokenInHeader: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        OAuth2TokenInCookie: { type: "apiKey", in: "cookie", name: "_bearer_token" },
        OAuth2: {
          type: "oauth2",
          flows: {
            password: { tokenUrl: "/api/auth/oauth2/token", refreshUrl: "/api/auth/oauth2/token", scopes: {} },
            clientCredentials: { tokenUrl: "/api/auth/oauth2/token", scopes: {} },
            authorizationCode: {
              authorizationUrl: "/api/auth/oauth2/authorization",
              tokenUrl: "/api/auth/oauth2/token",
              refreshUrl: "/api/auth/oauth2/token",
              scopes: {},
            },
          },
        },
      },
    },
  };
}
