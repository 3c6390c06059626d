// password (RFC 6749 4.3), kept for intdash compatibility. Failures count into the sign-in back-off per user
// name and client address (done by the accounts area); every failure answers invalid_grant with the same
// message, and an attempt that must wait a 429 with Retry-After, for known and unknown names alike.
import { clientAddress } from "../../http/client-address.js";
import { invalidGrant, invalidRequest, Throttled } from "../service/oauth-errors.js";
import { clientFor, FIRST_PARTY_CLIENT, grantedScopes, type GrantHandler } from "./grant.js";

export const ZERO_TENANT = "00000000-0000-0000-0000-000000000000";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const passwordGrant: GrantHandler = async (req) => {
  const { form, svc } = req;
  // Without client credentials the built-in first-party public client is assumed.
  const client =
    req.creds.clientId === undefined || req.creds.clientId === FIRST_PARTY_CLIENT.clientId
      ? FIRST_PARTY_CLIENT
      : await clientFor(
          req,
          "password",
          (c) =>
            c.kind === "client" && (c.grantTypes.includes("password") || c.grantTypes.includes("authorization_code")),
        );
  if (!form.username || form.password === undefined) throw invalidRequest("username and password are required");
  if (form.username.length > 256 || form.password.length > 512) throw invalidGrant("wrong user name or password");
  const tenant = form.tenant_uuid || ZERO_TENANT;
  if (!UUID.test(tenant)) throw invalidRequest("tenant_uuid must be a UUID");
  const from = clientAddress(req.http, svc.config.trustedProxies);
  const result = await svc.oauth.accounts.signIn(form.username, form.password, tenant.toLowerCase(), from);
  if (!result.ok) {
    if (result.reason === "throttled") throw new Throttled(Math.ceil(result.retryAfterMs / 1000));
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
