// What every grant handler receives and returns, plus helpers they share.
import type { IncomingMessage } from "node:http";
import type { Services } from "../../services.js";
import { authenticateClient, type ClientCredentials } from "../clients/client-auth.js";
import type { OAuthClient } from "../clients/model.js";
import { OAuthError, unauthorizedClient } from "../service/oauth-errors.js";
import type { TokenResponse } from "../tokens/issue.js";

export interface GrantRequest {
  /** The raw request: headers for client authentication, socket for TLS client certificates. */
  http: IncomingMessage;
  form: Record<string, string>;
  creds: ClientCredentials;
  svc: Services;
}

export type GrantHandler = (req: GrantRequest) => Promise<TokenResponse>;

/** The built-in public client of first-party tools (console, scripts) for password and refresh grants. */
export const FIRST_PARTY_CLIENT_ID = "first-party";
export const FIRST_PARTY_CLIENT: OAuthClient = {
  clientId: FIRST_PARTY_CLIENT_ID,
  kind: "client",
  grantTypes: ["password", "refresh_token"],
  tokenEndpointAuthMethod: "none",
  redirectUris: [],
  tlsClientAuthSubjectDn: "",
  verifySecret: () => false,
};

/** Authenticates the client and checks it may use `grant` (RFC 6749 unauthorized_client). */
export async function clientFor(
  req: GrantRequest,
  grant: string,
  allowed: (c: OAuthClient) => boolean = (c) => c.grantTypes.includes(grant),
) {
  const client = await authenticateClient(req.http, req.form, req.creds, (id) => req.svc.oauth.resolveClient(id));
  if (!allowed(client)) throw unauthorizedClient(`this client may not use the ${grant} grant`);
  return client;
}

/** Intersects what the subject holds with the client's cap and an optional requested `scope`. */
export function grantedScopes(held: readonly string[], client: OAuthClient, requested: string | undefined): string[] {
  const cap = client.scopeCap && client.scopeCap.length ? new Set(client.scopeCap) : undefined;
  const available = held.filter((s) => !cap || cap.has(s));
  if (requested === undefined || requested.trim() === "") return available;
  const wanted = [...new Set(requested.split(" ").filter(Boolean))];
  const have = new Set(available);
  const missing = wanted.filter((s) => !have.has(s));
  if (missing.length) throw new OAuthError("invalid_scope", `scope not available to this client: ${missing.join(" ")}`);
  return wanted;
}

export const nowSec = () => Math.floor(Date.now() / 1000);
