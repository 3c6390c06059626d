// POST /auth/oauth2/token (RFC 6749 3.2): form body, client authentication, one handler per grant.
import * as Schema from "effect/Schema";
import type { IncomingMessage } from "node:http";
import type { Context } from "koa";
import type { Services } from "../../services.js";
import { defineRoute, reply, type Reply } from "../../http/route.js";
import { readClientCredentials } from "../clients/client-auth.js";
import { CORS, invalidRequest, OAuthError } from "../service/oauth-errors.js";
import { authorizationCodeGrant } from "../grants/authorization-code.js";
import { clientCredentialsGrant } from "../grants/client-credentials.js";
import type { GrantHandler } from "../grants/grant.js";
import { passwordGrant } from "../grants/password.js";
import { refreshTokenGrant } from "../grants/refresh-token.js";
import { FORM_LIMIT, FORM_TYPE, mediaType, readTokenForm } from "./token-form.js";

export const GRANTS: Record<string, GrantHandler> = {
  password: passwordGrant,
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
  client_credentials: clientCredentialsGrant,
};

const opt = Schema.optional(Schema.String);
/** Every field optional: what is missing is reported by the grant, in the RFC 6749 error shape. */
export const TokenRequest = Schema.Struct({
  grant_type: Schema.optional(
    Schema.String.annotations({ description: "password | authorization_code | refresh_token | client_credentials" }),
  ),
  refresh_token: opt,
  tenant_uuid: opt,
  username: opt,
  password: opt,
  client_id: opt,
  client_secret: opt,
  client_certification: opt,
  redirect_uri: opt,
  code_verifier: opt,
  code: opt,
  scope: opt,
});

export const TokenResponseSchema = Schema.Struct({
  token_type: Schema.String,
  access_token: Schema.String,
  expires_in: Schema.Int,
  refresh_token: Schema.optional(Schema.String),
  refresh_token_expires_in: Schema.optional(Schema.Int),
  scope: Schema.String,
});

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache", ...CORS };

export { FORM_LIMIT, FORM_TYPE, mediaType };

/** Form bodies only (RFC 6749 3.2); JSON is refused rather than half-understood. */
export function requireForm(ctx: Context): void {
  if (mediaType(ctx.get("content-type")) !== FORM_TYPE)
    throw invalidRequest("the body must be application/x-www-form-urlencoded");
}

/**
 * The token endpoint proper, shared by the route and its fast path (token-fast-path.ts), which both read
 * the form with readTokenForm. It throws OAuthErrors; both callers render them with the peer's error renderer.
 */
export async function tokenEndpoint(
  http: IncomingMessage,
  form: Record<string, string>,
  svc: Services,
): Promise<Reply> {
  const grant = form.grant_type;
  if (!grant) throw invalidRequest("grant_type is required");
  const handler = Object.hasOwn(GRANTS, grant) ? GRANTS[grant] : undefined;
  if (!handler) throw new OAuthError("unsupported_grant_type", `grant_type ${grant} is not supported`);
  const creds = readClientCredentials(http, form);
  const issued = await handler({ http, form, creds, svc });
  svc.metrics.tokenIssued(grant);
  return reply(200, issued, NO_STORE);
}

export const tokenRoute = defineRoute({
  operationId: "issueToken",
  method: "POST",
  path: "/auth/oauth2/token",
  tag: "auth_OAuth2",
  summary: "Issue a token",
  auth: "none",
  body: TokenRequest,
  bodyKind: "form",
  bodyLimit: FORM_LIMIT,
  readBody: readTokenForm,
  success: 200,
  response: TokenResponseSchema,
  errors: [401],
  handler: ({ ctx, body }, svc) => tokenEndpoint(ctx.req, body as Record<string, string>, svc),
});
