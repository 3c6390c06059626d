// GET /auth/oauth2/authorization: run the checks; without a sign-in session send the browser to
// the sign-in page (same query), with one answer with a code at the redirect URI.
import * as Schema from "effect/Schema";
import { defineRoute } from "../../http/route.js";
import { emptyReply, issueCode } from "../service/authorize.js";
import { checkAuthorizationRequest } from "../checks/pipeline.js";
import type { AuthorizationRequest } from "../checks/context.js";
import { sessionUser } from "../signin/session.js";

const opt = Schema.optional(Schema.String);
export const AuthorizationQuery = Schema.Struct({
  client_id: opt,
  response_type: opt,
  redirect_uri: opt,
  state: opt,
  code_challenge: opt,
  code_challenge_method: opt,
});

export const SIGN_IN_PATH = "/api/auth/oauth2/sign-in";

export const authorizationRoute = defineRoute({
  operationId: "oauth2Authorization",
  method: "GET",
  path: "/auth/oauth2/authorization",
  tag: "auth_OAuth2",
  summary: "Authorization endpoint (redirects)",
  auth: "none",
  query: AuthorizationQuery,
  success: 302,
  handler: async ({ ctx }, svc) => {
    const req: AuthorizationRequest = { svc, params: {} };
    await checkAuthorizationRequest(svc, ctx.querystring, req);
    const user = await sessionUser(ctx, svc);
    if (!user) return emptyReply(302, { Location: `${SIGN_IN_PATH}?${ctx.querystring}`, "Cache-Control": "no-store" });
    return issueCode(svc, req, user.uuid);
  },
});
