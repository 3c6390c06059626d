// POST /auth/oauth2/revocation (RFC 7009). Answers 200 whether or not the token was known.
// A refresh token revokes its whole family (and the access tokens it issued); an access token is
// put on the jti denylist, which every endpoint consults.
import * as Schema from "effect/Schema";
import { defineRoute } from "../../http/route.js";
import { emptyReply } from "../service/authorize.js";
import { authenticateClient, readClientCredentials } from "../clients/client-auth.js";
import { invalidClient, invalidRequest, OAuthError } from "../service/oauth-errors.js";
import { FIRST_PARTY_CLIENT, nowSec } from "../grants/grant.js";
import { BEARER_COOKIE, presentedToken } from "../service/bearer.js";
import { grantsRepo } from "../repo/grants.js";
import { hashSecret } from "../service/secrets.js";
import { verifyAccessToken } from "../tokens/access-token.js";
import { NO_STORE, requireForm } from "./token.js";
import { endSessionOf } from "../signin/session.js";

const RevokeTokenRequest = Schema.Struct({
  client_id: Schema.optional(Schema.String),
  token_type_hint: Schema.optional(
    Schema.String.annotations({ description: "access_token | refresh_token (default)" }),
  ),
  token: Schema.optional(Schema.String),
  client_secret: Schema.optional(Schema.String),
  client_certification: Schema.optional(Schema.String),
});

export const revocationRoute = defineRoute({
  operationId: "reovokeToken",
  method: "POST",
  path: "/auth/oauth2/revocation",
  tag: "auth_OAuth2",
  summary: "Revoke a token",
  auth: "none",
  body: RevokeTokenRequest,
  bodyKind: "form",
  bodyLimit: 64 * 1024,
  success: 200,
  errors: [401],
  handler: async ({ ctx, body }, svc) => {
    requireForm(ctx);
    const form = body as Record<string, string>;
    const creds = readClientCredentials(ctx.req, form);
    if (!creds.clientId) throw invalidRequest("client_id is required");
    const client =
      creds.clientId === FIRST_PARTY_CLIENT.clientId
        ? FIRST_PARTY_CLIENT
        : await authenticateClient(ctx.req, form, creds, (id) => svc.oauth.resolveClient(id)).catch((err) => {
            throw err instanceof OAuthError
              ? err
              : invalidClient("client authentication failed", creds.via === "basic");
          });
    const fromRequest = form.token === undefined ? presentedToken(ctx) : undefined;
    const token = form.token ?? fromRequest?.token;
    if (!token) throw invalidRequest("token is required (or the _bearer_token cookie)");
    const hint = form.token_type_hint ?? "refresh_token";
    if (hint !== "refresh_token" && hint !== "access_token")
      throw new OAuthError("invalid_request", "token_type_hint must be access_token or refresh_token");
    const order = hint === "access_token" ? [revokeAccess, revokeRefresh] : [revokeRefresh, revokeAccess];
    for (const attempt of order) if (await attempt(token, client.clientId)) break;
    const headers: Record<string, string> = { ...NO_STORE };
    if (fromRequest?.via === "cookie")
      ctx.cookies.set(BEARER_COOKIE, "", { expires: new Date(0), httpOnly: true, path: "/" });
    return emptyReply(200, headers);

    async function revokeRefresh(token: string, clientId: string): Promise<boolean> {
      const row = await grantsRepo.getRefresh(svc.db, hashSecret(token));
      if (!row) return false;
      // Only the client a refresh token was issued to may revoke it (RFC 7009 2.1).
      if (row.client_id !== clientId) return true;
      await svc.oauth.issuer.revokeFamily(row.family_id);
      // A browser app signing its user out (the console) also ends the user's sign-in session here.
      if (row.subject_kind === "user") await endSessionOf(ctx, svc, row.subject_uuid);
      return true;
    }
    async function revokeAccess(token: string): Promise<boolean> {
      // Holding an access token is enough to give it up: no client match needed.
      const claims = verifyAccessToken(svc.oauth.keys, token, svc.config.publicUrl, 0);
      if (!claims) return false;
      if (claims.exp > nowSec()) await svc.oauth.revokeAccessToken(claims.jti, claims.exp);
      return true;
    }
  },
});
