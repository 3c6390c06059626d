// API-token authentication: `X-Intdash-Token` (the real header), `X-Service-Token` (the header the
// spec names) or `X-Edge-Token` (what older intdash clients, e.g. the Python SDK 2.1, send) carries a
// token issued by createAPIToken / createMyAPIToken / `cloud-peer token create`. The iSCP broker takes the
// same tokens as a ConnectRequest's access token (apiTokenPrincipal).
import type { Context } from "koa";
import type { Authenticator, Principal } from "../../auth/principal.js";
import { Unauthenticated } from "../../errors.js";
import type { AccountsService } from "./accounts-service.js";
import { digest } from "./password-rules.js";

/** The principal of a user's API token; throws Unauthenticated (with the reason) for any other string. */
export async function apiTokenPrincipal(accounts: AccountsService, token: string): Promise<Principal> {
  const row = await accounts.tokens.byDigest(digest(token.trim()));
  if (!row) throw new Unauthenticated("invalid API token");
  if (row.expired_at && Date.parse(row.expired_at) <= Date.now())
    throw new Unauthenticated("the API token has expired");
  const found = await accounts.principalForUser(row.user_uuid, "api_token", { credentialId: String(row.id) });
  if (!found) throw new Unauthenticated("the user of this API token is disabled");
  // An API token is a credential of its own (like a personal access token), often made by an
  // administrator for a service user: a temporary or expired password restricts only what was
  // obtained with that password (password grant, sign-in sessions), never the token.
  const { restricted: _password, ...principal } = found;
  accounts.noteTokenUse(row.id);
  return principal;
}

export function apiTokenAuthenticator(accounts: AccountsService): Authenticator {
  return async (ctx: Context) => {
    const token = ctx.get("x-intdash-token") || ctx.get("x-service-token") || ctx.get("x-edge-token");
    if (!token) return undefined;
    return apiTokenPrincipal(accounts, token);
  };
}
