// password (RFC 6749 4.3), kept for intdash compatibility. Failures count into the account lock-out
// (done by the accounts area); every failure answers invalid_grant with the same message, except a
// locked account, which says so whether or not the password was right.
import { invalidGrant, invalidRequest } from "../service/errors.js";
import { clientFor, FIRST_PARTY_CLIENT, grantedScopes, type GrantHandler } from "./grant.js";

export const ZERO_TENANT = "00000000-0000-0000-0000-000000000000";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const passwordGrant: GrantHandler = async (req) => {
  const { form, svc } = req;
  // Without client credentials the built-in first-party public client is assumed.
  const client =
    req.creds.clientId === undefined || req.creds.clientId === FIRST_PARTY_CLIENT.clientId
      ? FIRST_PARTY_CLIENT
      : await clientFor(req, "password", (c) => c.kind === "client" && (c.grantTypes.includes("password") || c.grantTypes.includes("authorization_code")));
  if (!form.username || form.password === undefined) throw invalidRequest("username and password are required");
  if (form.username.length > 256 || form.password.length > 512) throw invalidGrant("wrong user name or password");
  const tenant = form.tenant_uuid || ZERO_TENANT;
  if (!UUID.test(tenant)) throw invalidRequest("tenant_uuid must be a UUID");
  const result = await svc.oauth.accounts.signIn(form.username, form.password, tenant.toLowerCase());
  if (!result.ok) {
    if (result.reason === "locked") throw invalidGrant("the account is locked after too many failed sign-ins; ask an administrator to unlock it");
    throw invalidGrant("wrong user name or password");
  }
  const user = result.user;
  const scopes = grantedScopes(user.scopes, client, form.scope);
  return svc.oauth.issuer.issueWithRefresh({
    subject: { kind: "user", uuid: user.uuid },
    clientId: client.clientId,
    scopes,
    ...(user.restricted ? { restricted: user.restricted } : {}),
  });
};
