// refresh_token (RFC 6749 6) with rotation: each refresh token works once and yields a new one in
// the same family. Presenting a used one again means it leaked: the whole family is revoked
// (RFC 9700 4.14.2). The subject's current standing and scopes apply to the new token.
import { invalidGrant, invalidRequest, OAuthError } from "../service/oauth-errors.js";
import { grantsRepo } from "../repo/grants.js";
import { hashSecret } from "../service/secrets.js";
import { clientFor, FIRST_PARTY_CLIENT, nowSec, type GrantHandler } from "./grant.js";

export const refreshTokenGrant: GrantHandler = async (req) => {
  const { form, svc } = req;
  const client =
    req.creds.clientId === undefined || req.creds.clientId === FIRST_PARTY_CLIENT.clientId
      ? FIRST_PARTY_CLIENT
      : await clientFor(req, "refresh_token");
  if (!form.refresh_token) throw invalidRequest("refresh_token is required");
  const digest = hashSecret(form.refresh_token);
  const row = await grantsRepo.getRefresh(svc.db, digest);
  if (!row || row.client_id !== client.clientId) throw invalidGrant("the refresh token is invalid");
  if (row.revoked_at !== null) throw invalidGrant("the refresh token was revoked");
  if (row.used_at !== null || !(await grantsRepo.markRefreshUsed(svc.db, digest, nowSec()))) {
    await svc.oauth.issuer.revokeFamily(row.family_id);
    throw invalidGrant("the refresh token was already used; its whole family is revoked");
  }
  if (row.expires_at <= nowSec()) throw invalidGrant("the refresh token has expired");
  let scopes = row.scope ? row.scope.split(" ") : [];
  let restricted: "password_change" | undefined;
  if (row.subject_kind === "user") {
    const user = await svc.oauth.accounts.user(row.subject_uuid, { fresh: true });
    if (!user || user.disabled) {
      await svc.oauth.issuer.revokeFamily(row.family_id);
      throw invalidGrant("the user is no longer allowed to sign in");
    }
    const held = new Set(user.scopes);
    scopes = scopes.filter((s) => held.has(s));
    restricted = user.restricted;
  }
  if (form.scope) {
    const wanted = form.scope.split(" ").filter(Boolean);
    if (wanted.some((s) => !scopes.includes(s)))
      throw new OAuthError("invalid_scope", "scope exceeds the original grant");
    scopes = wanted;
  }
  return svc.oauth.issuer.issueWithRefresh(
    {
      subject: { kind: row.subject_kind, uuid: row.subject_uuid },
      clientId: row.client_id,
      scopes,
      ...(restricted ? { restricted } : {}),
    },
    row.family_id,
  );
};
