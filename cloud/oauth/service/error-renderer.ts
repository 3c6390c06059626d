// How the oauth area's errors are answered (the module's error renderer, asked by cloud/http/error-reply.ts
// before the infrastructure's own): OAuth errors get the RFC 6749 body; authorization errors a redirect
// to the client or, before its redirect URI is proven, an HTML page; a refused sign-in form a page.
import { JSON_TYPE, Reply } from "../../http/route.js";
import type { AreaErrorRenderer } from "../../module-contract.js";
import { AuthorizationError, SignInFormRejected } from "../checks/context.js";
import { errorPage } from "../signin/html.js";
import { redirectTo } from "./authorize.js";
import { CORS, OAuthError, Throttled } from "./oauth-errors.js";

/** RFC 6749 5.2: invalid_client is a 401 (with a Basic challenge when the client tried Basic), the rest 400; Throttled 429. */
function oauthReply(err: OAuthError): Reply {
  const challenge: Record<string, string> = err.basicChallenge
    ? { "WWW-Authenticate": 'Basic realm="oauth2", charset="UTF-8"' }
    : {};
  // A sign-in that must wait (RFC 6585 429): not a protocol error, a pause the client can read.
  if (err instanceof Throttled) challenge["Retry-After"] = String(err.retryAfterSeconds);
  return new Reply(
    err instanceof Throttled ? 429 : err.error === "invalid_client" ? 401 : 400,
    { error: err.error, error_description: err.description, type: err.error, title: err.description },
    { "Cache-Control": "no-store", Pragma: "no-cache", ...CORS, ...challenge },
    JSON_TYPE,
  );
}

/** RFC 6749 4.1.2.1: to the redirect URI once it is proven (with `state` and RFC 9207 `iss`), else a page for the user. */
function authorizationReply(err: AuthorizationError): Reply {
  if (!err.redirect) return errorPage(400, err.error, err.description);
  const { uri, state, iss } = err.redirect;
  return redirectTo(uri, { error: err.error, error_description: err.description, state, iss });
}

export const oauthErrorRenderer: AreaErrorRenderer = (err) => {
  if (err instanceof OAuthError) return oauthReply(err);
  if (err instanceof AuthorizationError) return authorizationReply(err);
  if (err instanceof SignInFormRejected) return errorPage(403, "invalid_request", err.message);
  return undefined;
};
