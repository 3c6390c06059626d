// authorization_code (RFC 6749 4.1.3) with PKCE. A code is single use, lives at most 60 s and is
// bound to its client, redirect URI and challenge; presenting it a second time revokes everything
// the first redemption produced (RFC 6749 4.1.2, RFC 9700 4.5).
import { invalidGrant, invalidRequest } from "../service/oauth-errors.js";
import { verifierMatches } from "../service/pkce.js";
import { grantsRepo } from "../repo/grants.js";
import { hashSecret } from "../service/secrets.js";
import { clientFor, grantedScopes, nowSec, type GrantHandler, type GrantRequest } from "./grant.js";

async function replayed(req: GrantRequest, familyId: string): Promise<never> {
  await req.svc.oauth.issuer.revokeFamily(familyId);
  throw invalidGrant("the authorization code was already used; the tokens it produced are revoked");
}

export const authorizationCodeGrant: GrantHandler = async (req) => {
  const { form, svc } = req;
  const client = await clientFor(req, "authorization_code");
  if (!form.code) throw invalidRequest("code is required");
  if (form.redirect_uri === undefined) throw invalidRequest("redirect_uri is required");
  const digest = hashSecret(form.code);
  const code = await grantsRepo.getCode(svc.db, digest);
  if (!code) throw invalidGrant("the authorization code is invalid");
  if (code.used_at !== null) return replayed(req, code.family_id);
  if (code.expires_at <= nowSec()) throw invalidGrant("the authorization code has expired");
  if (code.client_id !== client.clientId) throw invalidGrant("the authorization code was issued to another client");
  if (code.redirect_uri !== form.redirect_uri)
    throw invalidGrant("redirect_uri differs from the one of the authorization request");
  if (code.code_challenge) {
    if (!form.code_verifier) throw invalidGrant("code_verifier is required");
    if (!verifierMatches(form.code_verifier, code.code_challenge))
      throw invalidGrant("code_verifier does not match the code_challenge");
  } else if (form.code_verifier !== undefined) {
    // A verifier for a code issued without a challenge means a downgrade attempt (RFC 9700 2.1.1).
    throw invalidGrant("code_verifier sent but the authorization request had no code_challenge");
  }
  if (!(await grantsRepo.markCodeUsed(svc.db, digest, nowSec()))) return replayed(req, code.family_id);
  const user = await svc.oauth.accounts.user(code.user_uuid, { fresh: true });
  if (!user || user.disabled) throw invalidGrant("the user is no longer allowed to sign in");
  const scopes = grantedScopes(user.scopes, client, undefined);
  return svc.oauth.issuer.issueWithRefresh(
    {
      subject: { kind: "user", uuid: user.uuid },
      clientId: client.clientId,
      scopes,
      ...(user.restricted ? { restricted: user.restricted } : {}),
    },
    code.family_id,
  );
};
