// The authorization request as it passes through the checks (node-oidc-provider style: each check
// is a small named step that either passes or throws).
import type { Services } from "../../services.js";
import type { OAuthClient } from "../clients/model.js";
import type { OAuthErrorCode } from "../service/oauth-errors.js";

export interface AuthorizationRequest {
  svc: Services;
  /** Query parameters, each present at most once. */
  params: Record<string, string>;
  /** Set by check_client. */
  client?: OAuthClient;
  /** Set by check_redirect_uri once it equals a registered URI; errors may only be redirected after that. */
  redirectUri?: string;
}

/** Where an authorization error is sent back: the proven redirect URI, with the request's state and our issuer. */
export interface ErrorRedirect {
  uri: string;
  state: string | undefined;
  iss: string;
}

/** An authorization request refused; rendered (redirect or page) by http/error-reply.ts. */
export class AuthorizationError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly redirect?: ErrorRedirect,
  ) {
    super(description);
  }

  /** The same error, to be sent to `req`'s redirect URI once check_redirect_uri has proven it. */
  for(req: AuthorizationRequest): AuthorizationError {
    if (!req.redirectUri) return this;
    return new AuthorizationError(this.error, this.description, {
      uri: req.redirectUri,
      state: req.params.state,
      iss: req.svc.config.publicUrl,
    });
  }
}

/** The sign-in form was not sent from our page (CSRF token missing, stale or foreign): a page, never a redirect. */
export class SignInFormRejected extends Error {}

export type Check = (req: AuthorizationRequest) => void | Promise<void>;
