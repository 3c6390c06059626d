// The authorization request as it passes through the checks (node-oidc-provider style: each check
// is a small named step that either passes or throws).
import type { Services } from "../../services.js";
import type { OAuthClient } from "../clients/model.js";
import type { OAuthErrorCode } from "../service/errors.js";

export interface AuthorizationRequest {
  svc: Services;
  /** Query parameters, each present at most once. */
  params: Record<string, string>;
  /** Set by check_client. */
  client?: OAuthClient;
  /** Set by check_redirect_uri once it equals a registered URI; errors may only be redirected after that. */
  redirectUri?: string;
}

export class AuthorizationError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
  }
}

export type Check = (req: AuthorizationRequest) => void | Promise<void>;
