// What the token and authorization endpoints need to know about a client, whoever stores it.
// User-owned OAuth2 clients (this area) and edges (organisation area) both resolve to this shape.
import type { SubjectKind } from "../tokens/access-token.js";
import type { AuthMethod } from "../repo/clients.js";

export type { AuthMethod };

export interface OAuthClient {
  clientId: string;
  kind: "client" | "edge";
  grantTypes: readonly string[];
  tokenEndpointAuthMethod: AuthMethod;
  /** Exact strings; the authorization endpoint never matches by prefix or pattern. */
  redirectUris: readonly string[];
  tlsClientAuthSubjectDn: string;
  /** Upper bound of the scopes of every token issued to this client; undefined = no cap. */
  scopeCap?: readonly string[];
  /** Subject and scopes of a client_credentials token; undefined when the client may not use that grant. */
  credentials?(): Promise<{ subject: { kind: SubjectKind; uuid: string }; scopes: readonly string[] } | undefined>;
  /** Constant-time check of a presented secret against the client's stored digests. */
  verifySecret(secret: string): Promise<boolean> | boolean;
}

/** Looks a client up by client_id; undefined when this resolver does not know it. */
export type ClientResolver = (clientId: string) => Promise<OAuthClient | undefined>;
