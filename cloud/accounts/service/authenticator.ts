// API-token authentication: `X-Intdash-Token` (the real header) or `X-Service-Token` (the header
// the spec names) carries a token issued by createAPIToken / createMyAPIToken / `cloud-peer token create`.
import type { Context } from "koa";
import type { Authenticator } from "../../auth/principal.js";
import { Unauthenticated } from "../../errors.js";
import type { AccountsService } from "./accounts-service.js";
import { digest } from "./password-rules.js";

export function apiTokenAuthenticator(accounts: AccountsService): Authenticator {
  return async (ctx: Context) => {
    const token = ctx.get("x-intdash-token") || ctx.get("x-service-token");
    if (!token) return undefined;
    const row = await accounts.tokens.byDigest(digest(token.trim()));
    if (!row) throw new Unauthenticated("invalid API token");
    if (row.expired_at && Date.parse(row.expired_at) <= Date.now()) throw new Unauthenticated("the API token has expired");
    const principal = await accounts.principalForUser(row.user_uuid, "api_token", { credentialId: String(row.id) });
    if (!principal) throw new Unauthenticated("the user of this API token is disabled");
    accounts.noteTokenUse(row.id);
    return principal;
  };
}
