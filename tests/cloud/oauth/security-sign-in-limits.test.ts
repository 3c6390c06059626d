// S16 of docs/security.md (RFC 9700 4.15, credential guessing): the sign-in page's limits per user name and per
// client address. Each test has a peer of its own, so no limit window is shared.
import { describe, expect, it } from "vitest";
import type { ConfigInput } from "../../../cloud/config.js";
import { startTestPeer } from "../harness.js";
import { CookieJar, hiddenField } from "./browser.js";
import { adminToken, createUser, form, registerClient } from "./helpers.js";

const REDIRECT = "https://app.example/cb";
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/** A fresh peer and its sign-in page; `signIn` posts the page's form and answers the status. */
async function signInPageOf(config: ConfigInput = {}) {
  const fresh = await startTestPeer({ config });
  const admin = await adminToken(fresh);
  const c = await registerClient(fresh, admin, {
    name: "p",
    grant_type: "authorization_code",
    token_endpoint_auth_method: "none",
    redirect_uris: [REDIRECT],
  });
  const query = new URLSearchParams({
    client_id: c.client_id,
    response_type: "code",
    redirect_uri: REDIRECT,
    state: "st",
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
  });
  const jar = new CookieJar();
  const first = await jar.fetch(`${fresh.url}/api/auth/oauth2/authorization?${query}`);
  const pageUrl = new URL(first.headers.get("location")!, fresh.url).toString();
  const csrf = hiddenField(await (await jar.fetch(pageUrl)).text(), "csrf")!;
  /** Sends `forwardedFor` as X-Forwarded-For. */
  const signIn = async (username: string, password: string, forwardedFor?: string) => {
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}),
    };
    const r = await jar.fetch(pageUrl, {
      method: "POST",
      headers,
      body: new URLSearchParams({ csrf, username, password }).toString(),
    });
    await r.text();
    return r.status;
  };
  let n = 0;
  /** Status of one failed sign-in, a new user name each time. */
  const fail = (forwardedFor?: string) => signIn(`nobody${n++}`, "Wrong-password-1", forwardedFor);
  return { fresh, admin, signIn, fail };
}

describe("RFC 9700 security items: sign-in limits", () => {
  it("S16 brute force: the sign-in page is rate-limited per user name, and the name's back-off holds for the password grant", async () => {
    const { fresh, admin, signIn } = await signInPageOf({ signInWaitSeconds: 60 });
    try {
      const victim = await createUser(fresh, admin);
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) statuses.push(await signIn(victim.name, `Wrong-password-${i}`));
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses[10]).toBe(429);
      const waiting = await fresh.api(
        "/auth/oauth2/token",
        form({ grant_type: "password", username: victim.name, password: victim.password }),
      );
      expect(waiting.status).toBe(429);
      expect(Number(waiting.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await fresh.stop();
    }
  });

  it("S16 brute force: the sign-in page is rate-limited per client address across user names", async () => {
    // X-Forwarded-For is anyone's to write: without trusted proxies it does not move a guesser to a new window.
    const { fresh, fail } = await signInPageOf();
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++) statuses.push(await fail(`198.51.100.${i}`));
      expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
      expect(statuses[20]).toBe(429);
    } finally {
      await fresh.stop();
    }
  });

  it("S16 behind a trusted proxy (CLOUD_TRUSTED_PROXIES): the limit is per forwarded client, so one guesser locks out no one else", async () => {
    const { fresh, fail } = await signInPageOf({ trustedProxies: "127.0.0.0/8, ::1" });
    try {
      const statuses: number[] = [];
      // The rightmost untrusted hop is the client; a left part the client made up does not count.
      for (let i = 0; i < 21; i++) statuses.push(await fail(`10.9.9.${i}, 203.0.113.7`));
      expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
      expect(statuses[20]).toBe(429);
      expect(await fail("203.0.113.8")).toBe(401);
      expect(await fail("203.0.113.7, 127.0.0.1")).toBe(429); // through a second trusted proxy: still that client
    } finally {
      await fresh.stop();
    }
  });
});
