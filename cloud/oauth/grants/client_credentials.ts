// client_credentials (RFC 6749 4.4): a confidential client (or an edge) gets an access token for
// itself. No refresh token; nothing is written to the database on this path.
import { unauthorizedClient } from "../errors.js";
import { clientFor, grantedScopes, type GrantHandler } from "./grant.js";

export const clientCredentialsGrant: GrantHandler = async (req) => {
  const client = await clientFor(req, "client_credentials", (c) => c.grantTypes.includes("client_credentials") && c.tokenEndpointAuthMethod !== "none");
  const who = await client.credentials?.();
  if (!who) throw unauthorizedClient("this client has no subject to issue tokens for");
  const scopes = grantedScopes(who.scopes, { ...client, scopeCap: undefined }, req.form.scope);
  const at = req.svc.oauth.issueAccessToken({ subject: who.subject, clientId: client.clientId, scopes });
  return { token_type: "bearer", access_token: at.access_token, expires_in: at.expires_in, scope: scopes.join(" ") };
};
