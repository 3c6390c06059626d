// The two things the authorization server needs from the accounts area, behind one narrow port:
// checking a password (through the sign-in back-off, which counts failures) and reading a user's current
// standing (disabled, super, scopes, password-change-only) when issuing or honouring a token.
export interface AccountUser {
  uuid: string;
  name: string;
  isSuper: boolean;
  disabled: boolean;
  /** Scope names from the user's roles. */
  scopes: readonly string[];
  /** Temporary or expired password: the token may only change the password. */
  restricted?: "password_change";
}

export type SignInResult =
  | { ok: true; user: AccountUser }
  | { ok: false; reason: "invalid" | "disabled" }
  | { ok: false; reason: "throttled"; retryAfterMs: number };

export interface AccountsPort {
  /** `from`: the client address, for its back-off (cloud/accounts/service/sign-in-backoff.ts). */
  signIn(username: string, password: string, tenantUuid: string, from?: string): Promise<SignInResult>;
  /**
   * The user's standing. Bearer checks may take one cached for a second; a grant that issues a token asks for
   * `fresh` standing, so a token made right after a change (password, roles, disabled) reflects it.
   */
  user(uuid: string, opts?: { fresh?: boolean }): Promise<AccountUser | undefined>;
}
