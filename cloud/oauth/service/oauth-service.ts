// The authorization server's service, reachable as `svc.oauth` by every later area: token issuing,
// verification and revocation, signing keys, and the client resolvers (the extension point edges and the console use).
import type { Services } from "../../services.js";
import type { AccountsPort } from "./accounts-port.js";
import type { ClientResolver, OAuthClient } from "../clients/model.js";
import type { OwnClients } from "../clients/own-clients.js";
import { verifyAccessToken, type AccessTokenClaims } from "../tokens/access-token.js";
import type { Denylist } from "../tokens/denylist.js";
import type { IssuedAccessToken, IssueInput, TokenIssuer } from "../tokens/issue.js";
import type { KeyStore } from "../tokens/keystore.js";

export interface OAuthService {
  keys: KeyStore;
  denylist: Denylist;
  issuer: TokenIssuer;
  ownClients: OwnClients;
  accounts: AccountsPort;
  /** Extension point, filled from the modules' `clientResolvers` in module order (cloud/server.ts); tried in
   * order, the first that knows a client_id wins, and the user-owned clients are asked after them all. */
  clientResolvers: ClientResolver[];
  resolveClient(clientId: string): Promise<OAuthClient | undefined>;
  /** Signs an access token (JWT) for a subject; no refresh token. */
  issueAccessToken(input: IssueInput): IssuedAccessToken;
  /** Claims of a valid, unrevoked access token issued here, else undefined. */
  verifyAccessToken(token: string): AccessTokenClaims | undefined;
  /** Puts an access token's jti on the denylist until it expires. */
  revokeAccessToken(jti: string, exp: number): Promise<void>;
}

declare module "../../services.js" {
  interface Services {
    oauth: OAuthService;
  }
}

export function createOAuthService(
  svc: Pick<Services, "config">,
  parts: { keys: KeyStore; denylist: Denylist; issuer: TokenIssuer; ownClients: OwnClients; accounts: AccountsPort },
): OAuthService {
  const clientResolvers: ClientResolver[] = [];
  // Verified tokens, so a client calling often pays for the ECDSA verification once; expiry and the
  // denylist are still checked on every use.
  const verified = new Map<string, AccessTokenClaims>();
  const VERIFIED_MAX = 10_000;
  return {
    ...parts,
    clientResolvers,
    async resolveClient(clientId) {
      for (const resolve of [...clientResolvers, parts.ownClients.resolve]) {
        const c = await resolve(clientId);
        if (c) return c;
      }
      return undefined;
    },
    issueAccessToken: (input) => parts.issuer.issueAccessToken(input),
    verifyAccessToken(token) {
      let claims = verified.get(token);
      if (!claims || claims.iss !== svc.config.publicUrl) {
        claims = verifyAccessToken(parts.keys, token, svc.config.publicUrl);
        if (!claims) return undefined;
        if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
        verified.set(token, claims);
      }
      if (claims.exp <= Math.floor(Date.now() / 1000) || parts.denylist.has(claims.jti)) return undefined;
      return claims;
    },
    revokeAccessToken: (jti, exp) => parts.denylist.add([{ jti, expiresAt: exp }]),
  };
}
