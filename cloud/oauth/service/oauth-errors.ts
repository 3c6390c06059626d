// OAuth 2.0 protocol errors (RFC 6749 5.2 at the token endpoint, 4.1.2.1 at the authorization
// endpoint). http/error-reply.ts renders them: the RFC fields and, for clients of the intdash API,
// `type`/`title`, with the status RFC 6749 gives the code.

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
    /** The client tried HTTP Basic, so the answer challenges it (RFC 6749 5.2). */
    readonly basicChallenge = false,
  ) {
    super(description);
  }
}

/** Too many failed sign-ins: the client waits (429 with Retry-After) before this name or address may try again. */
export class Throttled extends OAuthError {
  constructor(readonly retryAfterSeconds: number) {
    super("temporarily_unavailable", "too many failed sign-ins: wait before trying again");
  }
}

export const invalidRequest = (d: string) => new OAuthError("invalid_request", d);
export const invalidGrant = (d: string) => new OAuthError("invalid_grant", d);
export const unauthorizedClient = (d: string) => new OAuthError("unauthorized_client", d);
/** A 401, with a challenge when the client tried HTTP Basic. */
export const invalidClient = (d: string, basic: boolean) => new OAuthError("invalid_client", d, basic);
