// Signing in with the peer's own OAuth 2.0: authorization code + PKCE as the public client `console`.
// Tokens live in this module's memory only (a reload signs in again, which the sign-in session makes
// quick); the refresh token is rotated before the access token expires, and revoked at sign-out.
// Only the PKCE verifier and state cross the redirect, in sessionStorage, and are removed at once.

export const CLIENT_ID = "console";
const AUTHORIZE = "/api/auth/oauth2/authorization";
const TOKEN = "/api/auth/oauth2/token";
const REVOKE = "/api/auth/oauth2/revocation";
const PENDING = "console.signin";

interface Tokens {
  access: string;
  refresh: string | undefined;
  expiresAt: number;
  /** The token may only change the password (a temporary or expired one): the peer's scope `temporary`. */
  passwordChangeOnly: boolean;
}

let tokens: Tokens | undefined;
let refreshTimer: number | undefined;
let refreshing: Promise<void> | undefined;

export const redirectUri = () => `${location.origin}/console/`;

const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const random = (n: number) => b64url(crypto.getRandomValues(new Uint8Array(n)));

const never = () => new Promise<never>(() => {});

/** Sends the browser to the authorization endpoint; `back` is the console route to return to. */
export async function startSignIn(back = location.hash): Promise<never> {
  // The redirect URI is registered under the peer's public URL: a console opened under another name
  // of the same server (localhost for 127.0.0.1) moves there first.
  const meta = await fetch("/.well-known/oauth-authorization-server")
    .then((r) => r.json())
    .catch(() => undefined);
  const issuer = typeof meta?.issuer === "string" ? new URL(meta.issuer).origin : location.origin;
  if (issuer !== location.origin) {
    location.replace(`${issuer}/console/${back}`);
    return never();
  }
  const verifier = random(32);
  const state = random(16);
  const challenge = b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, back }));
  const q = new URLSearchParams({
    response_type: "code",
    client_id: CLIENT_ID,
    redirect_uri: redirectUri(),
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  location.assign(`${AUTHORIZE}?${q}`);
  return never();
}

async function tokenRequest(form: Record<string, string>): Promise<void> {
  const r = await fetch(TOKEN, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...form, client_id: CLIENT_ID }),
  });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error_description ?? body.title ?? `token endpoint answered ${r.status}`);
  setTokens(body);
}

function setTokens(body: { access_token: string; refresh_token?: string; expires_in?: number; scope?: string }): void {
  const ttl = (body.expires_in ?? 300) * 1000;
  tokens = {
    access: body.access_token,
    refresh: body.refresh_token ?? tokens?.refresh,
    expiresAt: Date.now() + ttl,
    passwordChangeOnly: body.scope === "temporary",
  };
  clearTimeout(refreshTimer);
  // Refresh at 80% of the lifetime, so requests never carry an expired token on a slow network.
  if (tokens.refresh)
    refreshTimer = window.setTimeout(() => void refresh().catch(() => undefined), Math.max(1000, ttl * 0.8));
}

/** The redirect back from the authorization endpoint: exchange the code; returns the route to show. */
export async function finishSignIn(params: URLSearchParams): Promise<string> {
  const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? "null") as {
    verifier: string;
    state: string;
    back: string;
  } | null;
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, "", `/console/${pending?.back ?? ""}`);
  if (params.get("error")) throw new Error(`sign-in failed: ${params.get("error_description") ?? params.get("error")}`);
  if (!pending || pending.state !== params.get("state"))
    throw new Error("sign-in failed: the answer does not belong to this browser's request");
  await tokenRequest({
    grant_type: "authorization_code",
    code: params.get("code") ?? "",
    redirect_uri: redirectUri(),
    code_verifier: pending.verifier,
  });
  return pending.back;
}

/** Rotates the refresh token (the server allows each one once). */
export function refresh(): Promise<void> {
  if (!tokens?.refresh) return Promise.reject(new Error("not signed in"));
  refreshing ??= tokenRequest({ grant_type: "refresh_token", refresh_token: tokens.refresh }).finally(
    () => (refreshing = undefined),
  );
  return refreshing;
}

export const accessToken = () => tokens?.access;
/** True while the signed-in user must choose a new password before anything else. */
export const mustChangePassword = () => tokens?.passwordChangeOnly === true;

/** Revokes the refresh token (its whole family, with the access tokens it issued) and forgets both. */
export async function signOut(): Promise<void> {
  const t = tokens;
  tokens = undefined;
  clearTimeout(refreshTimer);
  if (!t) return;
  const revoke = (token: string, hint: string) =>
    fetch(REVOKE, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, token_type_hint: hint, client_id: CLIENT_ID }),
    });
  if (t.refresh) await revoke(t.refresh, "refresh_token");
  await revoke(t.access, "access_token");
}
