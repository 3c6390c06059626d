// One test per item of docs/security.md (RFC 9700, OAuth 2.0 Security Best Current Practice), except S16
// (security-sign-in-limits.test.ts) and S17 (security-logs.test.ts). Test names start with the item's id.
import crypto from "node:crypto";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySecret, hashSecret } from "../../../cloud/oauth/service/secrets.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { CookieJar, signInThroughPage } from "./browser.js";
import {
  adminToken,
  bearer,
  createUser,
  decodeJwt,
  form,
  MEMBER_ROLE,
  oidcConfig,
  passwordToken,
  registerClient,
} from "./helpers.js";

const REDIRECT = "https://app.example/cb";
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

describe("RFC 9700 security items", () => {
  let peer: TestPeer;
  let admin: string;
  let user: { uuid: string; name: string; password: string };
  let userToken: string;
  let pub: any;
  let conf: any;
  const authz = (p: Record<string, string>) => `${peer.url}/api/auth/oauth2/authorization?${new URLSearchParams(p)}`;
  const request = (c: any, extra: Record<string, string> = {}) => ({
    client_id: c.client_id,
    response_type: "code",
    redirect_uri: REDIRECT,
    state: "st",
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
    ...extra,
  });

  beforeAll(async () => {
    peer = await startTestPeer({ config: { signInWaitSeconds: 60 } });
    admin = await adminToken(peer);
    user = await createUser(peer, admin);
    userToken = (await passwordToken(peer, user.name, user.password)).access_token;
    pub = await registerClient(peer, userToken, {
      name: "pub",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "none",
      redirect_uris: [REDIRECT],
    });
    conf = await registerClient(peer, userToken, {
      name: "conf",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: [REDIRECT],
    });
  });
  afterAll(async () => {
    await peer.stop();
  });

  /** Signs in as `who` and returns the redirect back to the client. */
  async function codeFor(params: Record<string, string>, who = user): Promise<URL> {
    const jar = new CookieJar();
    const first = await jar.fetch(authz(params));
    const signedIn = await signInThroughPage(jar, peer.url, first.headers.get("location")!, who.name, who.password);
    const back = await jar.fetch(new URL(signedIn.headers.get("location")!, peer.url).toString());
    return new URL(back.headers.get("location")!);
  }

  it("S1 exact redirect URI matching: no prefix, path, query, case or port variations", async () => {
    for (const uri of [
      `${REDIRECT}x`,
      `${REDIRECT}/`,
      `${REDIRECT}?a=b`,
      "https://APP.example/cb",
      "https://app.example:443/cb",
      "https://app.example/CB",
    ]) {
      const res = await fetch(authz(request(pub, { redirect_uri: uri })), { redirect: "manual" });
      expect(res.status, uri).toBe(400);
      expect(res.headers.get("location")).toBeNull();
    }
  });

  it("S2 no open redirector: errors before the redirect URI is proven are pages, and sign-in only leads back to the authorization endpoint", async () => {
    const unknown = await fetch(
      authz({ client_id: "unknown", redirect_uri: "https://evil.example/", response_type: "code", state: "s" }),
      { redirect: "manual" },
    );
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get("location")).toBeNull();
    const jar = new CookieJar();
    const first = await jar.fetch(authz(request(pub)));
    const signedIn = await signInThroughPage(
      jar,
      peer.url,
      `${first.headers.get("location")}&return_to=https://evil.example/`,
      user.name,
      user.password,
    );
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toMatch(/^\/api\/auth\/oauth2\/authorization\?/);
  });

  it("S3 PKCE: S256 only, required for public clients, and no downgrade by sending a verifier for a code without challenge", async () => {
    const plain = await fetch(authz(request(pub, { code_challenge_method: "plain", code_challenge: VERIFIER })), {
      redirect: "manual",
    });
    expect(new URL(plain.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
    const { code_challenge: _, code_challenge_method: __, ...noPkce } = request(pub);
    const missing = await fetch(authz(noPkce), { redirect: "manual" });
    expect(new URL(missing.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
    // Confidential client without PKCE: the code must not be redeemable with an (injected) verifier.
    const { code_challenge: ___, code_challenge_method: ____, ...confNoPkce } = request(conf);
    const cb = await codeFor(confNoPkce);
    const basic = `Basic ${Buffer.from(`${conf.client_id}:${conf.client_secret}`).toString("base64")}`;
    const res = await peer.api("/auth/oauth2/token", {
      ...form({
        grant_type: "authorization_code",
        code: cb.searchParams.get("code")!,
        redirect_uri: REDIRECT,
        code_verifier: VERIFIER,
      }),
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic },
    });
    expect(await res.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("S4 codes: single use, short-lived, bound to client, redirect URI and challenge; replay revokes the tokens issued", async () => {
    const cb = await codeFor(request(pub));
    const code = cb.searchParams.get("code")!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const redeem = () =>
      peer.api(
        "/auth/oauth2/token",
        form({
          grant_type: "authorization_code",
          client_id: pub.client_id,
          code,
          redirect_uri: REDIRECT,
          code_verifier: VERIFIER,
        }),
      );
    const first: any = await (await redeem()).json();
    expect(first.access_token).toBeTruthy();
    expect(await (await redeem()).json()).toMatchObject({ error: "invalid_grant" });
    expect((await peer.api("/auth/users/me", { headers: bearer(first.access_token) })).status).toBe(401);
    const row = await peer.svc.db.get<{ expires_at: number }>(
      "SELECT expires_at FROM oauth_codes ORDER BY expires_at DESC LIMIT 1",
    );
    expect(row!.expires_at - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(60);
  });

  it("S5 refresh tokens: rotated, bound to their client, reuse revokes the family", async () => {
    const t0 = await passwordToken(peer, user.name, user.password);
    const cfg = oidcConfig(peer, "first-party", oidc.None());
    const t1 = await oidc.refreshTokenGrant(cfg, t0.refresh_token);
    await expect(oidc.refreshTokenGrant(cfg, t0.refresh_token)).rejects.toMatchObject({ error: "invalid_grant" });
    await expect(oidc.refreshTokenGrant(cfg, t1.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
    const stored = await peer.svc.db.all<{ digest: string }>("SELECT digest FROM oauth_refresh_tokens");
    expect(JSON.stringify(stored)).not.toContain(t0.refresh_token);
  });

  it("S6 implicit and other response types are refused", async () => {
    for (const rt of ["token", "id_token", "code token", "code id_token"]) {
      const res = await fetch(authz(request(pub, { response_type: rt })), { redirect: "manual" });
      expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("unsupported_response_type");
    }
  });

  it("S7 mix-up: authorization responses carry iss (RFC 9207), on success and on error", async () => {
    const cb = await codeFor(request(pub));
    expect(cb.searchParams.get("iss")).toBe(peer.url);
    const err = await fetch(authz(request(pub, { response_type: "token" })), { redirect: "manual" });
    expect(new URL(err.headers.get("location")!).searchParams.get("iss")).toBe(peer.url);
  });

  it("S8 CSRF: state required; the sign-in form needs its CSRF token", async () => {
    const { state: _, ...noState } = request(pub);
    const res = await fetch(authz(noState), { redirect: "manual" });
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
    const jar = new CookieJar();
    const first = await jar.fetch(authz(request(pub)));
    const pageUrl = new URL(first.headers.get("location")!, peer.url).toString();
    await jar.fetch(pageUrl);
    const forged = await fetch(pageUrl, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ username: user.name, password: user.password, csrf: "x".repeat(43) }).toString(),
    });
    expect(forged.status).toBe(403);
    const wrongToken = await jar.fetch(pageUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ username: user.name, password: user.password, csrf: "y".repeat(43) }).toString(),
    });
    expect(wrongToken.status).toBe(403);
  });

  it("S9 clickjacking and leakage: sign-in and error pages forbid framing, caching and referrers", async () => {
    const jar = new CookieJar();
    const first = await jar.fetch(authz(request(pub)));
    const page = await jar.fetch(new URL(first.headers.get("location")!, peer.url).toString());
    for (const res of [page, await fetch(authz({}), { redirect: "manual" })]) {
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    }
  });

  it("S10 cookies: session HttpOnly + SameSite=Lax, CSRF SameSite=Strict, Secure when the public URL is https", async () => {
    const jar = new CookieJar();
    const first = await jar.fetch(authz(request(pub)));
    const pageUrl = new URL(first.headers.get("location")!, peer.url).toString();
    const page = await fetch(pageUrl);
    expect(page.headers.get("set-cookie")).toMatch(
      /^oauth_csrf=[^;]+; Path=\/api\/auth\/oauth2\/sign-in; HttpOnly; SameSite=Strict$/,
    );
    const signedIn = await signInThroughPage(jar, peer.url, first.headers.get("location")!, user.name, user.password);
    expect(signedIn.headers.get("set-cookie")).toMatch(
      /^oauth_session=[^;]+; Path=\/api\/auth\/oauth2; HttpOnly; SameSite=Lax; Max-Age=\d+$/,
    );
    const https = await startTestPeer({ config: { publicUrl: "https://peer.example" } });
    try {
      const c = await registerClient(https, await adminToken(https), {
        name: "p",
        grant_type: "authorization_code",
        token_endpoint_auth_method: "none",
        redirect_uris: [REDIRECT],
      });
      const j = new CookieJar();
      const f = await j.fetch(`${https.url}/api/auth/oauth2/authorization?${new URLSearchParams(request(c))}`);
      const s = await signInThroughPage(j, https.url, f.headers.get("location")!, "admin", "Admin-password-1");
      expect(s.headers.get("set-cookie")).toMatch(/; Secure$/);
    } finally {
      await https.stop();
    }
  });

  it("S11 client secrets: 256-bit random, stored as SHA-256 digests, compared in constant time via digests", async () => {
    const c = await registerClient(peer, userToken, { name: "s", grant_type: "client_credentials" });
    expect(Buffer.from(c.client_secret, "base64url")).toHaveLength(32);
    const rows = await peer.svc.db.all<{ digest: string }>(
      "SELECT digest FROM oauth_client_secrets WHERE client_id = ?",
      [c.client_id],
    );
    expect(rows).toEqual([{ digest: hashSecret(c.client_secret) }]);
    expect(verifySecret(c.client_secret, rows[0]!.digest)).toBe(true);
    expect(verifySecret(c.client_secret.slice(0, -1) + "A", rows[0]!.digest)).toBe(c.client_secret.endsWith("A"));
    expect(verifySecret("", rows[0]!.digest)).toBe(false);
  });

  it("S12 token privileges: a client caps the scopes of every token it gets, even for a super user signing in through it", async () => {
    // conf was registered by a member: an admin signing in through it gets member scopes, not super-user powers.
    const cb = await codeFor(request(conf), { uuid: "", name: "admin", password: "Admin-password-1" });
    const tokens = await oidc.authorizationCodeGrant(
      oidcConfig(peer, conf.client_id, oidc.ClientSecretBasic(conf.client_secret)),
      cb,
      { pkceCodeVerifier: VERIFIER, expectedState: "st" },
    );
    const granted = tokens.scope!.split(" ").filter(Boolean);
    expect(granted).not.toContain("all:a");
    expect(granted.every((s) => conf.scopes.includes(s))).toBe(true);
    expect((await peer.api("/auth/users", { headers: bearer(tokens.access_token) })).status).toBe(403);
    expect((await peer.api("/auth/users", { headers: bearer(admin) })).status).toBe(200);
  });

  it("S12 token privileges follow the subject's current roles: a demoted user keeps no removed scope, through a client-credentials client or an older token", async () => {
    const SUPER = "afb7f751-cf2c-4ce6-a9b4-c5820217df87";
    const name = `demoted${process.pid}`;
    const created: any = await (
      await peer.api("/auth/users", {
        method: "POST",
        headers: bearer(admin),
        json: { name, role_uuids: [MEMBER_ROLE, SUPER] },
      })
    ).json();
    const temp = created.password.temporary_password;
    const first = await passwordToken(peer, name, temp);
    expect(
      (
        await peer.api("/auth/users/me/password", {
          method: "PUT",
          headers: bearer(first.access_token),
          json: { password: "Demoted-password-1", old_password: temp },
        })
      ).status,
    ).toBe(200);
    const before = (await passwordToken(peer, name, "Demoted-password-1")).access_token;
    const cc = await registerClient(peer, before, { name: "background", grant_type: "client_credentials" });
    expect(cc.scopes).toContain("all:a");
    const createUserWith = (token: string) =>
      peer.api("/auth/users", {
        method: "POST",
        headers: bearer(token),
        json: { name: `made${crypto.randomUUID().slice(0, 8)}`, role_uuids: [MEMBER_ROLE] },
      });
    expect((await createUserWith(before)).status).toBe(201);

    expect(
      (await peer.api(`/auth/users/${created.uuid}/roles/${SUPER}`, { method: "DELETE", headers: bearer(admin) }))
        .status,
    ).toBe(204);
    await new Promise((r) => setTimeout(r, 1100)); // the user's standing is cached for one second
    const ccGrant = () =>
      peer.api(
        "/auth/oauth2/token",
        form({ grant_type: "client_credentials", client_id: cc.client_id, client_secret: cc.client_secret }),
      );
    const after: any = await (await ccGrant()).json();
    expect(after.scope.split(" ")).not.toContain("all:a");
    expect((await createUserWith(after.access_token)).status).toBe(403);
    expect((await createUserWith(before)).status).toBe(403);

    // A disabled owner's client gets no token at all.
    expect(
      (await peer.api(`/auth/users/${created.uuid}/disable`, { method: "PUT", headers: bearer(admin) })).status,
    ).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const refused = await ccGrant();
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "unauthorized_client" });
  });

  it("S13 signatures: only ES256 from our keys; alg=none, HS256 with the public key, and another issuer are refused", async () => {
    const t = (await passwordToken(peer, user.name, user.password)).access_token;
    const [, p] = t.split(".");
    const claims = decodeJwt(t).claims;
    const fake = (header: object, payload: object) =>
      `${Buffer.from(JSON.stringify(header)).toString("base64url")}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.c2ln`;
    const kid = decodeJwt(t).header.kid;
    for (const bad of [
      fake({ alg: "none", typ: "at+jwt", kid }, claims),
      fake({ alg: "HS256", typ: "at+jwt", kid }, claims),
      `${t.split(".")[0]}.${Buffer.from(JSON.stringify({ ...claims, iss: "https://other.example" })).toString("base64url")}.${t.split(".")[2]}`,
    ])
      expect((await peer.api("/auth/users/me", { headers: bearer(bad) })).status).toBe(401);
    expect(p).toBeTruthy();
  });

  it("S14 tokens only in the Authorization header or the cookie, never in the query string", async () => {
    const t = (await passwordToken(peer, user.name, user.password)).access_token;
    expect((await peer.api(`/auth/users/me?access_token=${t}`)).status).toBe(401);
    expect((await peer.api("/auth/users/me", { headers: bearer(t) })).status).toBe(200);
  });

  it("S15 token responses are not cached; sign-in answers 303 so credentials are never re-posted (no 307)", async () => {
    const res = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "password", username: user.name, password: user.password }),
    );
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("pragma")).toBe("no-cache");
    const jar = new CookieJar();
    const first = await jar.fetch(authz(request(pub)));
    const signedIn = await signInThroughPage(jar, peer.url, first.headers.get("location")!, user.name, user.password);
    expect(signedIn.status).toBe(303);
  });

  it("S19 sender checks: codes and refresh tokens work only for the client they were issued to, authenticated by its registered method", async () => {
    const basic = (c: any) => `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString("base64")}`;
    const post = (fields: Record<string, string>, authorization?: string) =>
      peer.api("/auth/oauth2/token", {
        ...form(fields),
        headers: { "content-type": "application/x-www-form-urlencoded", ...(authorization ? { authorization } : {}) },
      });
    const other = await registerClient(peer, userToken, {
      name: "other",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: [REDIRECT],
    });
    const cb = await codeFor(request(conf));
    const code = {
      grant_type: "authorization_code",
      code: cb.searchParams.get("code")!,
      redirect_uri: REDIRECT,
      code_verifier: VERIFIER,
    };
    // The code: not for another client, not for its own client_id without the secret.
    expect(await (await post(code, basic(other))).json()).toMatchObject({ error: "invalid_grant" });
    expect((await post({ ...code, client_id: conf.client_id })).status).toBe(401);
    const t: any = await (await post(code, basic(conf))).json();
    expect(t.refresh_token).toBeTruthy();
    // The refresh token: a confidential client's is sender-constrained by its client authentication.
    const refresh = { grant_type: "refresh_token", refresh_token: t.refresh_token };
    expect((await post({ ...refresh, client_id: conf.client_id })).status).toBe(401);
    expect((await post({ ...refresh, client_id: conf.client_id, client_secret: conf.client_secret })).status).toBe(401); // registered for basic, not post
    expect(await (await post(refresh, basic(other))).json()).toMatchObject({ error: "invalid_grant" });
    expect(await (await post(refresh)).json()).toMatchObject({ error: "invalid_grant" }); // not the first-party client's
    expect((await post(refresh, basic(conf))).status).toBe(200);
  });
});
