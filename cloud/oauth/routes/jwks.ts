// GET /auth/oauth2/jwks (RFC 7517): the public halves of every published signing key.
import * as Schema from "effect/Schema";
import { defineRoute, reply } from "../../http/route.js";
import { CORS } from "../service/oauth-errors.js";

const Jwk = Schema.Struct({
  use: Schema.String,
  kty: Schema.String,
  kid: Schema.String,
  alg: Schema.String,
  crv: Schema.optional(Schema.String),
  x: Schema.optional(Schema.String),
  y: Schema.optional(Schema.String),
  n: Schema.optional(Schema.String),
  e: Schema.optional(Schema.String),
});

export const jwksRoute = defineRoute({
  operationId: "authOauth2JwksGet",
  method: "GET",
  path: "/auth/oauth2/jwks",
  tag: "auth_OAuth2",
  summary: "Get the key set",
  auth: "none",
  success: 200,
  response: Schema.Struct({ keys: Schema.Array(Jwk) }),
  responseMediaType: "application/jwk-set+json; charset=utf-8",
  handler: (_req, svc) =>
    reply(
      200,
      svc.oauth.keys.jwks,
      { "Cache-Control": "public, max-age=60", ...CORS },
      "application/jwk-set+json; charset=utf-8",
    ),
});
