// The authorization request's checks, in order. check_redirect_uri comes right after the client is
// known so that every later error can be sent back to the (now proven) redirect URI.
import { checkClient } from "./check-client.js";
import { checkClientGrant } from "./check-client-grant.js";
import { checkPkce } from "./check-pkce.js";
import { checkRedirectUri } from "./check-redirect-uri.js";
import { checkResponseType } from "./check-response-type.js";
import { checkState } from "./check-state.js";
import { AuthorizationError, type AuthorizationRequest, type Check } from "./context.js";
import { parseQueryOnce, rejectDuplicates } from "./reject-duplicates.js";
import type { Services } from "../../services.js";

export const CHECKS: readonly Check[] = [
  checkClient,
  checkRedirectUri,
  checkClientGrant,
  checkResponseType,
  checkState,
  checkPkce,
];

/**
 * Parses and checks an authorization request, leaving what was proven on `req`; throws AuthorizationError,
 * addressed to the redirect URI when the checks got that far.
 */
export async function checkAuthorizationRequest(
  svc: Services,
  query: string,
  req: AuthorizationRequest = { svc, params: {} },
): Promise<AuthorizationRequest> {
  const { params, repeated } = parseQueryOnce(query);
  req.params = params;
  try {
    for (const check of [rejectDuplicates(repeated), ...CHECKS]) await check(req);
  } catch (err) {
    throw err instanceof AuthorizationError ? err.for(req) : err;
  }
  return req;
}
