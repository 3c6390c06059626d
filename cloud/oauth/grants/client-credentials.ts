// client_credentials (RFC 6749 4.4): a confidential client (or an edge) gets an access token for
// itself. No refresh token; nothing is written to the database on this path.
import { unauthorizedClient } from "../service/oauth-errors.js";
import { clientFor, grantedScopes, type GrantHandler } from "./grant.js";

export const clientCredentialsGrant: GrantHandler = async (req) => {
  const client = await clientFor(
    req,
    "client_credentials",
    (c) => c.grantTypes.includes("client_credentials") && c.tokenEndpointAuthMethod !== "none",
  );
  const who = await client.credentials?.();
  if (!who) throw unauthorizedClient("this client has no subject to issue tokens for");
  let held = who.scopes;
  if (who.subject.kind === "user") {
    // A user's client acts for its owner as the owner stands now: a disabled owner's client gets
    // nothing, and scopes the owner lost since registering the client are not granted.
    const owner = await req.svc.oauth.accounts.user(who.subject.uuid, { fresh: true });
    if (!owner || owner.disabled) throw unauthorizedClient("the owner of this client may no longer sign in");
    const current = new Set(owner.scopes);
    held = held.filter((s) => current.has(s));
  }
  const scopes = grantedScopes(held, { ...client, scopeCap: undefined }, req.form.scope);
  const at = req.svc.oauth.issueAccessToken({ subject: who.subject, clientId: client.clientId, scopes });
  return { token_type: "bearer", access_token: at.access_token, expires_in: at.expires_in, scope: scopes.join(" ") };
};
