// The cloud's OpenAPI document: the kit's builder with the `{type, title}` error body, the intdash
// security schemes, and body media types by body kind.
import * as Schema from "effect/Schema";
import { buildOpenApi as buildDocument, jsonSchema, type Json } from "../../lib/http/openapi.js";
import { JSON_TYPE, type AnyRoute } from "./route.js";

const ErrorBody = Schema.Struct({
  type: Schema.String,
  title: Schema.String,
  properties: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
});

const defaultMediaTypes = (route: AnyRoute) =>
  route.bodyMediaTypes ??
  (route.bodyKind === "form"
    ? ["application/x-www-form-urlencoded"]
    : route.bodyKind === "raw"
      ? ["application/octet-stream"]
      : ["application/json"]);

const SECURITY = [{ IntdashToken: [] }, { ServiceToken: [] }, { OAuth2TokenInHeader: [] }, { OAuth2TokenInCookie: [] }];

export function buildOpenApi(routes: AnyRoute[], info: { title: string; version: string; serverUrl: string }): Json {
  return buildDocument(routes, {
    info: { title: info.title, version: info.version },
    servers: [{ url: `${info.serverUrl}/api` }],
    error: { name: "ErrorProblem", schema: ErrorBody },
    jsonType: JSON_TYPE,
    decodedParameters: true,
    errorStatuses: (route) => [400, ...(route.auth === "none" ? [] : [401, 403])],
    errorDescription: () => "error",
    requestContent: (route, defs) => {
      // JSON bodies refuse unknown keys; form bodies (OAuth endpoints) ignore them, so the document allows them there.
      const schema =
        route.bodyKind === "raw"
          ? { type: "string", format: "binary" }
          : jsonSchema(route.body!.ast, defs, { allowExtraKeys: route.bodyKind === "form" });
      return Object.fromEntries(defaultMediaTypes(route).map((m) => [m, { schema }]));
    },
    extend: (route, op) => {
      const responses = op.responses as Json;
      for (const status of route.alsoSuccess ?? [])
        responses[String(status)] = { description: status === 304 ? "not modified" : "success" };
      op.security = route.auth === "none" ? [] : SECURITY;
    },
    components: {
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
  });
}
