// The one place a cloud error becomes an answer (status, body, headers). The Koa application and the
// token fast path both call errorReply. Domain errors and ApiErrors get the intdash `{type, title}` body
// (with `properties` naming fields); OAuth errors the RFC 6749 body; authorization errors a redirect
// to the client or, before its redirect URI is proven, an HTML page.
import type { Logger } from "pino";
import { HttpProblem, MethodNotAllowed } from "../../lib/http/problems.js";
import { Conflict, DomainError, Forbidden, Invalid, NotFound, Unauthenticated, type ErrorType } from "../errors.js";
import { AuthorizationError, SignInFormRejected } from "../oauth/checks/context.js";
import { redirectTo } from "../oauth/service/authorize.js";
import { CORS, OAuthError, Throttled } from "../oauth/service/errors.js";
import { errorPage } from "../oauth/signin/html.js";
import { isDatabaseUnavailable, isStorageFull, isUnstorableText } from "../storage/db.js";
import { ApiError } from "./errors.js";
import { JSON_TYPE, Reply } from "./route.js";

const UNAUTHENTICATED_HEADERS = { "WWW-Authenticate": 'Bearer realm="api", X-Intdash-Token realm="api"' };

function domainStatus(err: DomainError): number {
  if (err instanceof Invalid) return 400;
  if (err instanceof Unauthenticated) return 401;
  if (err instanceof Forbidden) return 403;
  if (err instanceof NotFound) return 404;
  if (err instanceof Conflict) return 409;
  return 400;
}

const problem = (status: number, type: ErrorType, title: string, properties?: Record<string, string>, headers: Record<string, string> = {}) =>
  new Reply(status, properties ? { type, title, properties } : { type, title }, headers, JSON_TYPE);

const KIT_TYPES: Record<number, ErrorType> = { 400: "invalid_request", 404: "not_found", 405: "method_not_allowed", 413: "payload_too_large" };

/** RFC 6749 5.2: invalid_client is a 401 (with a Basic challenge when the client tried Basic), the rest 400; Throttled 429. */
function oauthReply(err: OAuthError): Reply {
  const challenge: Record<string, string> = err.basicChallenge ? { "WWW-Authenticate": 'Basic realm="oauth2", charset="UTF-8"' } : {};
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

/** Maps anything thrown while answering `path` to its reply; server faults are logged here. */
export function errorReply(err: unknown, log: Logger, path: string): Reply {
  if (err instanceof DomainError)
    return problem(domainStatus(err), err.type, err.title, err.properties, err instanceof Unauthenticated ? UNAUTHENTICATED_HEADERS : {});
  if (err instanceof OAuthError) return oauthReply(err);
  if (err instanceof AuthorizationError) return authorizationReply(err);
  if (err instanceof SignInFormRejected) return errorPage(403, "invalid_request", err.message);
  if (err instanceof ApiError) return problem(err.status, err.type, err.title, err.properties, err.headers);
  if (err instanceof MethodNotAllowed) return problem(405, "method_not_allowed", `method ${err.method} is not allowed here`, undefined, err.headers);
  if (err instanceof HttpProblem) return problem(err.status, KIT_TYPES[err.status] ?? "invalid_request", err.message, undefined, err.headers);
  if (isClientError(err)) return problem(err.status, "invalid_request", err.expose ? err.message : "bad request");
  if (isStorageFull(err)) {
    // A server condition the client may retry, never a 500.
    log.error({ err: (err as Error).message, path }, "storage full");
    return problem(507, "insufficient_storage", "the server's storage is full: nothing of this request was stored", undefined, { "Retry-After": "60" });
  }
  if (isUnstorableText(err)) return problem(400, "invalid_request", "the request holds a character that cannot be stored (such as U+0000)");
  if (isDatabaseUnavailable(err)) {
    log.warn({ err: (err as Error).message, path }, "database unavailable");
    return problem(503, "service_unavailable", "the database cannot be reached: try again later", undefined, { "Retry-After": "5" });
  }
  log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack }, path }, "unhandled error");
  return problem(500, "internal_error", "unexpected server error");
}

const isClientError = (err: unknown): err is { status: number; expose: boolean; message: string } =>
  typeof err === "object" && err !== null && typeof (err as { status?: unknown }).status === "number" &&
  (err as { status: number }).status >= 400 && (err as { status: number }).status < 500;

/** The `{type, title}` body for `status`, for answers written outside Koa (a refused WebSocket upgrade). */
export function errorBodyJson(status: number, title: string): { contentType: string; body: string } {
  const type = KIT_TYPES[status] ?? (status === 409 ? "conflict" : "invalid_request");
  return { contentType: JSON_TYPE, body: JSON.stringify({ type, title }) };
}
