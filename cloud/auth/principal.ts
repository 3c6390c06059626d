// Who is calling. Every authenticator (API-token headers, bearer JWT, cookie) produces a Principal;
// one guard (access decider) then decides from it. Nothing else decides access ad hoc.
import type { Context } from "koa";

export interface Principal {
  kind: "user" | "edge";
  uuid: string;
  isSuper: boolean;
  /** Scope names the credential carries (from the subject's roles, or the token's `scope`). */
  scopes: readonly string[];
  via: "api_token" | "bearer" | "cookie";
  /** A token of a user whose password is temporary or expired may only change the password. */
  restricted?: "password_change";
  clientId?: string;
  /** JWT id or API token id, for revocation and last_used_at bookkeeping. */
  credentialId?: string;
}

/** Returns undefined when its credential is absent; throws 401 when present but invalid. */
export type Authenticator = (ctx: Context) => Promise<Principal | undefined>;

export interface AccessDecider {
  /** path is relative to the API base, e.g. `/auth/users/me` (no `/api` prefix). */
  allows(principal: Principal, method: string, path: string): Promise<boolean> | boolean;
}
