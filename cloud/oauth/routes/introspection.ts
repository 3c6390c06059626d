// POST /auth/oauth2/introspection (RFC 7662; not an intdash operation): for confidential clients, which
// authenticate as at the token endpoint. Always 200 with `active` for a well-formed request.
import * as Schema from "effect/Schema";
import { defineRoute, reply } from "../../http/route.js";
import { authenticateClient, readClientCredentials } from "../clients/client-auth.js";
import { invalidClient, invalidRequest, OAuthError } from "../service/oauth-errors.js";
import { FIRST_PARTY_CLIENT } from "../grants/grant.js";
import { introspect } from "../tokens/introspect.js";
import { NO_STORE, requireForm } from "./token.js";

const IntrospectionRequest = Schema.Struct({
  token: Schema.optional(Schema.String),
  token_type_hint: Schema.optional(Schema.String.annotations({ description: "access_token | refresh_token" })),
  client_id: Schema.optional(Schema.String),
  client_secret: Schema.optional(Schema.String),
  client_certification: Schema.optional(Schema.String),
});

const IntrospectionResponse = Schema.Struct({
  active: Schema.Boolean,
  scope: Schema.optional(Schema.String),
  client_id: Schema.optional(Schema.String),
  username: Schema.optional(Schema.String),
  token_type: Schema.optional(Schema.String),
  sub: Schema.optional(Schema.String),
  sub_kind: Schema.optional(Schema.Literal("user", "edge")),
  iss: Schema.optional(Schema.String),
  iat: Schema.optional(Schema.Int),
  exp: Schema.optional(Schema.Int),
  jti: Schema.optional(Schema.String),
});

export const introspectionRoute = defineRoute({
  operationId: "introspectToken",
  method: "POST",
  path: "/auth/oauth2/introspection",
  tag: "auth_OAuth2",
  summary: "Introspect an access or refresh token (RFC 7662; confidential clients)",
  auth: "none",
  body: IntrospectionRequest,
  bodyKind: "form",
  bodyLimit: 64 * 1024,
  success: 200,
  response: IntrospectionResponse,
  errors: [401],
  handler: async ({ ctx, body }, svc) => {
    requireForm(ctx);
    const form = body as Record<string, string>;
    const creds = readClientCredentials(ctx.req, form);
    const basic = creds.via === "basic";
    if (creds.clientId === FIRST_PARTY_CLIENT.clientId)
      throw invalidClient("introspection is for confidential clients", basic);
    const client = await authenticateClient(ctx.req, form, creds, (id) => svc.oauth.resolveClient(id)).catch((err) => {
      throw err instanceof OAuthError ? err : invalidClient("client authentication failed", basic);
    });
    if (client.tokenEndpointAuthMethod === "none")
      throw invalidClient("introspection is for confidential clients", basic);
    if (!form.token) throw invalidRequest("token is required");
    return reply(200, await introspect(svc, form.token, form.token_type_hint, client.clientId), NO_STORE);
  },
});
