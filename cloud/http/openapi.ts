// OpenAPI 3.1 generated from the very RouteDefs (and schemas) that serve and validate requests.
import { JSONSchema, Schema, SchemaAST } from "effect";
import type { AnyRoute } from "./route.js";

type Json = Record<string, unknown>;

const ErrorBody = Schema.Struct({
  type: Schema.String,
  title: Schema.String,
  properties: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
});

function jsonSchema(schema: Schema.Schema.Any): Json {
  try {
    const s = JSONSchema.make(schema as Schema.Schema<unknown, unknown>, { target: "openApi3.1" }) as unknown as Json;
    delete s.$schema;
    return s;
  } catch {
    // Transformations without a JSON Schema form (e.g. Buffer bodies) are described loosely.
    return {};
  }
}

function fieldsOf(schema: Schema.Schema.Any): Array<{ name: string; optional: boolean; schema: Json }> {
  let ast = schema.ast;
  while (SchemaAST.isTransformation(ast) || SchemaAST.isRefinement(ast)) ast = ast.from;
  if (!SchemaAST.isTypeLiteral(ast)) return [];
  return ast.propertySignatures.map((p) => ({
    name: String(p.name),
    optional: p.isOptional,
    schema: jsonSchema(Schema.make(p.type)),
  }));
}

const defaultMediaTypes = (route: AnyRoute) =>
  route.bodyMediaTypes ??
  (route.bodyKind === "form"
    ? ["application/x-www-form-urlencoded"]
    : route.bodyKind === "raw"
      ? ["application/octet-stream"]
      : ["application/json"]);

function operation(route: AnyRoute): Json {
  const parameters = [
    ...(route.params ? fieldsOf(route.params).map((f) => ({ name: f.name, in: "path", required: true, schema: f.schema })) : []),
    ...(route.query ? fieldsOf(route.query).map((f) => ({ name: f.name, in: "query", required: !f.optional, schema: f.schema })) : []),
  ];
  const responses: Json = {};
  const successContent = route.response
    ? { [route.responseMediaType ?? "application/json; charset=utf-8"]: { schema: jsonSchema(route.response) } }
    : undefined;
  responses[String(route.success)] = { description: "success", ...(successContent ? { content: successContent } : {}) };
  const errorStatuses = new Set([400, ...(route.auth === "none" ? [] : [401, 403]), ...(route.errors ?? [])]);
  for (const status of errorStatuses)
    responses[String(status)] = {
      description: "error",
      content: { "application/json; charset=utf-8": { schema: { $ref: "#/components/schemas/ErrorProblem" } } },
    };
  const op: Json = { operationId: route.operationId, tags: [route.tag], summary: route.summary ?? route.operationId, responses };
  if (parameters.length) op.parameters = parameters;
  if (route.body) {
    const schema = route.bodyKind === "raw" ? { type: "string", format: "binary" } : jsonSchema(route.body);
    op.requestBody = { required: true, content: Object.fromEntries(defaultMediaTypes(route).map((m) => [m, { schema }])) };
  }
  op.security = route.auth === "none" ? [] : [{ IntdashToken: [] }, { ServiceToken: [] }, { OAuth2TokenInHeader: [] }, { OAuth2TokenInCookie: [] }];
  return op;
}

export function buildOpenApi(routes: AnyRoute[], info: { title: string; version: string; serverUrl: string }): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    if (route.hidden) continue;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: "3.1.0",
    info: { title: info.title, version: info.version },
    servers: [{ url: `${info.serverUrl}/api` }],
    paths,
    components: {
      schemas: { ErrorProblem: jsonSchema(ErrorBody) },
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
