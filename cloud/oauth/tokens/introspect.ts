// RFC 7662 token introspection: what a resource server learns about a token it was handed. An access
// token is active while its signature, issuer, expiry and the denylist say so and its user still stands;
// a refresh token only for the client it was issued to, while unused, unrevoked and unexpired.
import type { Services } from "../../services.js";
import { nowSec } from "../grants/grant.js";
import { grantsRepo } from "../repo/grants.js";
import { hashSecret } from "../service/secrets.js";

export type Introspection = { active: false } | ({ active: true } & Record<string, string | number | boolean>);

const INACTIVE: Introspection = { active: false };

async function accessToken(svc: Services, token: string): Promise<Introspection | undefined> {
  const claims = svc.oauth.verifyAccessToken(token);
  if (!claims) return undefined;
  let username: string | undefined;
  if (claims.sub_kind === "user") {
    const user = await svc.oauth.accounts.user(claims.sub);
    if (!user || user.disabled) return INACTIVE;
    username = user.name;
  }
  return {
    active: true,
    token_type: "Bearer",
    scope: claims.scope,
    client_id: claims.client_id,
    sub: claims.sub,
    sub_kind: claims.sub_kind,
    ...(username !== undefined ? { username } : {}),
    iss: claims.iss,
    iat: claims.iat,
    exp: claims.exp,
    jti: claims.jti,
  };
}

async function refreshToken(svc: Services, token: string, clientId: string): Promise<Introspection | undefined> {
  const row = await grantsRepo.getRefresh(svc.db, hashSecret(token));
  if (!row) return undefined;
  // Another client learns nothing about it (as revocation, RFC 7009 2.1, binds it to its client).
  if (row.client_id !== clientId || row.used_at !== null || row.revoked_at !== null || row.expires_at <= nowSec())
    return INACTIVE;
  return {
    active: true,
    scope: row.scope,
    client_id: row.client_id,
    sub: row.subject_uuid,
    sub_kind: row.subject_kind,
    iat: row.created_at,
    exp: row.expires_at,
  };
}

/** Tries the hinted kind first (RFC 7662 2.1: the hint only speeds the search). */
export async function introspect(
  svc: Services,
  token: string,
  hint: string | undefined,
  clientId: string,
): Promise<Introspection> {
  const order =
    hint === "refresh_token"
      ? [() => refreshToken(svc, token, clientId), () => accessToken(svc, token)]
      : [() => accessToken(svc, token), () => refreshToken(svc, token, clientId)];
  for (const attempt of order) {
    const found = await attempt();
    if (found) return found;
  }
  return INACTIVE;
}
