// OAuth 2.0 protocol errors (RFC 6749 5.2 at the token endpoint, 4.1.2.1 at the authorization
// endpoint). The body carries the RFC fields and, for clients of the intdash API, `type`/`title`.
import { reply, type Reply } from "../../http/route.js";

/**
 * Token, revocation and JWKS answers may be read by browser apps of any origin (public SPA clients):
 * they use no cookies of ours for authentication, so a wildcard exposes nothing.
 */
export const CORS = { "Access-Control-Allow-Origin": "*" };

export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "access_denied"
  | "unsupported_response_type"
  | "server_error"
  | "temporarily_unavailable";

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }

  toReply(): Reply {
    return reply(
      this.status,
      { error: this.error, error_description: this.description, type: this.error, title: this.description },
      { "Cache-Control": "no-store", Pragma: "no-cache", ...CORS, ...this.headers },
    );
  }
}

export const invalidRequest = (d: string) => new OAuthError("invalid_request", d);
export const invalidGrant = (d: string) => new OAuthError("invalid_grant", d);
export const unauthorizedClient = (d: string) => new OAuthError("unauthorized_client", d);
/** 401 with a challenge when the client tried HTTP Basic (RFC 6749 5.2), else 401 without one. */
export const invalidClient = (d: string, basic: boolean) =>
  new OAuthError("invalid_client", d, 401, basic ? { "WWW-Authenticate": 'Basic realm="oauth2", charset="UTF-8"' } : {});
