// Resource-server side: `Authorization: Bearer <JWT>` or the `_bearer_token` cookie becomes a
// Principal for the one guard. Signature, issuer, expiry, the jti denylist and the subject's current
// standing (a disabled user's tokens stop working at once) are all checked.
import type { Context } from "koa";
import type { Authenticator, Principal } from "../../auth/principal.js";
import { Unauthenticated } from "../../errors.js";
import type { Services } from "../../services.js";

export const BEARER_COOKIE = "_bearer_token";
const OAUTH_ENDPOINTS = "/api/auth/oauth2/";

/** The access token a request presents, and how. */
export function presentedToken(ctx: Context): { token: string; via: "bearer" | "cookie" } | undefined {
  const m = /^bearer\s+(\S+)\s*$/i.exec(ctx.get("authorization"));
  if (m) return { token: m[1]!, via: "bearer" };
  const cookie = ctx.cookies.get(BEARER_COOKIE);
  return cookie ? { token: cookie, via: "cookie" } : undefined;
}

export function bearerAuthenticator(svc: Services): Authenticator {
  return async (ctx) => {
    // The OAuth endpoints authenticate clients, not bearers; a stale cookie must not block them.
    if (ctx.path.startsWith(OAUTH_ENDPOINTS)) return undefined;
    const presented = presentedToken(ctx);
    if (!presented) return undefined;
    const claims = svc.oauth.verifyAccessToken(presented.token);
    if (!claims) throw new Unauthenticated("the access token is invalid, expired or revoked");
    const principal: Principal = {
      kind: claims.sub_kind,
      uuid: claims.sub,
      isSuper: false,
      scopes: claims.scope ? claims.scope.split(" ") : [],
      via: presented.via,
      clientId: claims.client_id,
      credentialId: claims.jti,
    };
    if (claims.restricted === "password_change") {
      principal.restricted = "password_change";
      principal.scopes = [];
    }
    if (claims.sub_kind === "user") {
      const user = await svc.oauth.accounts.user(claims.sub);
      if (!user || user.disabled) throw new Unauthenticated("the token's user no longer exists or is disabled");
      Object.assign(principal, standingScopes(principal.scopes, user, principal.restricted !== undefined));
    }
    return principal;
  };
}

/**
 * A user token's scopes as they stand now: scopes the user lost since the token was issued are gone at
 * once (like a disabled user's tokens), and super-user powers come only with a token carrying all of
 * the user's scopes (not one capped by a client). Used for HTTP and iSCP alike.
 */
export function standingScopes(
  tokenScopes: readonly string[],
  user: { scopes: readonly string[]; isSuper: boolean },
  restricted = false,
): { scopes: string[]; isSuper: boolean } {
  const current = new Set(user.scopes);
  const scopes = tokenScopes.filter((s) => current.has(s));
  const held = new Set(scopes);
  return { scopes, isSuper: user.isSuper && !restricted && user.scopes.every((s) => held.has(s)) };
}
