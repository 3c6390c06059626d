// The authorization-code flow over HTTP with openid-client on the client side, and every error path
// of the authorization endpoint: a page before the redirect URI is proven, a redirect after.
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { CookieJar, hiddenField, signInThroughPage } from "./browser.js";
import {
  adminToken,
  bearer,
  createUser,
  decodeJwt,
  form,
  oidcConfig,
  passwordToken,
  registerClient,
} from "./helpers.js";

const REDIRECT = "https://app.example/callback";

describe("authorization endpoint and authorization_code grant", () => {
  let peer: TestPeer;
  let user: { uuid: string; name: string; password: string };
  let userToken: string;
  let confidential: any;
  let pub: any;
  let cc: any;
  const authz = () => `${peer.url}/api/auth/oauth2/authorization`;

  beforeAll(async () => {
    peer = await startTestPeer();
    const admin = await adminToken(peer);
    user = await createUser(peer, admin);
    userToken = (await passwordToken(peer, user.name, user.password)).access_token;
    confidential = await registerClient(peer, userToken, {
      name: "Web App",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: [REDIRECT],
    });
    pub = await registerClient(peer, userToken, {
      name: "SPA",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "none",
      redirect_uris: [REDIRECT, "com.example.app:/oauth"],
    });
    cc = await registerClient(peer, userToken, { name: "cc", grant_type: "client_credentials" });
  });
  afterAll(async () => {
    await peer.stop();
  });

  async function authorize(config: oidc.Configuration, jar: CookieJar, extra: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      ...extra,
    });
    let res = await jar.fetch(url.toString());
    if (res.status === 302 && res.headers.get("location")!.startsWith("/api/auth/oauth2/sign-in")) {
      res = await signInThroughPage(jar, peer.url, res.headers.get("location")!, user.name, user.password);
      expect(res.status).toBe(303);
      res = await jar.fetch(new URL(res.headers.get("location")!, peer.url).toString());
    }
    expect(res.status).toBe(302);
    return { callback: new URL(res.headers.get("location")!), verifier, state };
  }

  it("runs the full flow for a confidential client with PKCE, then skips the page thanks to the session", async () => {
    const config = oidcConfig(peer, confidential.client_id, oidc.ClientSecretBasic(confidential.client_secret));
    const jar = new CookieJar();
    const { callback, verifier, state } = await authorize(config, jar);
    expect(callback.origin + callback.pathname).toBe(REDIRECT);
    expect(callback.searchParams.get("state")).toBe(state);
    expect(callback.searchParams.get("iss")).toBe(peer.url);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(decodeJwt(tokens.access_token).claims).toMatchObject({ sub: user.uuid, client_id: confidential.client_id });
    expect(tokens.refresh_token).toBeTruthy();
    expect(jar.has("oauth_session")).toBe(true);
    // Second authorization: straight to the redirect URI.
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      state: "s2",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    });
    const again = await jar.fetch(url.toString());
    expect(again.status).toBe(302);
    expect(again.headers.get("location")!.startsWith(REDIRECT + "?code=")).toBe(true);
  });

  it("runs the flow for a public client (none + PKCE) and refuses a wrong verifier", async () => {
    const config = oidcConfig(peer, pub.client_id, oidc.None());
    const jar = new CookieJar();
    const first = await authorize(config, jar);
    await expect(
      oidc.authorizationCodeGrant(config, first.callback, {
        pkceCodeVerifier: oidc.randomPKCECodeVerifier(),
        expectedState: first.state,
      }),
    ).rejects.toMatchObject({ error: "invalid_grant" });
    const second = await authorize(config, jar);
    const tokens = await oidc.authorizationCodeGrant(config, second.callback, {
      pkceCodeVerifier: second.verifier,
      expectedState: second.state,
    });
    expect(decodeJwt(tokens.access_token).claims.client_id).toBe(pub.client_id);
  });

  it("makes codes single-use: a second redemption fails and revokes what the first produced", async () => {
    const config = oidcConfig(peer, confidential.client_id, oidc.ClientSecretBasic(confidential.client_secret));
    const jar = new CookieJar();
    const { callback, verifier, state } = await authorize(config, jar);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect((await peer.api("/auth/users/me", { headers: bearer(tokens.access_token) })).status).toBe(200);
    await expect(
      oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }),
    ).rejects.toMatchObject({ error: "invalid_grant" });
    expect((await peer.api("/auth/users/me", { headers: bearer(tokens.access_token) })).status).toBe(401);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: "invalid_grant",
    });
  });

  it("binds codes to the client and the redirect URI", async () => {
    const config = oidcConfig(peer, pub.client_id, oidc.None());
    const jar = new CookieJar();
    const { callback, verifier } = await authorize(config, jar);
    const code = callback.searchParams.get("code")!;
    const otherClient = await peer.api("/auth/oauth2/token", {
      ...form({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier }),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${confidential.client_id}:${confidential.client_secret}`).toString("base64")}`,
      },
    });
    expect(await otherClient.json()).toMatchObject({ error: "invalid_grant" });
    const otherUri = await peer.api(
      "/auth/oauth2/token",
      form({
        grant_type: "authorization_code",
        client_id: pub.client_id,
        code,
        redirect_uri: "com.example.app:/oauth",
        code_verifier: verifier,
      }),
    );
    expect(await otherUri.json()).toMatchObject({ error: "invalid_grant" });
    const missingVerifier = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "authorization_code", client_id: pub.client_id, code, redirect_uri: REDIRECT }),
    );
    expect(await missingVerifier.json()).toMatchObject({ error: "invalid_grant" });
    const ok = await peer.api(
      "/auth/oauth2/token",
      form({
        grant_type: "authorization_code",
        client_id: pub.client_id,
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      }),
    );
    expect(ok.status).toBe(200);
  });

  it("expires codes after 60 seconds", async () => {
    const config = oidcConfig(peer, pub.client_id, oidc.None());
    const { callback, verifier } = await authorize(config, new CookieJar());
    const realNow = Date.now;
    Date.now = () => realNow() + 61_000;
    try {
      const res = await peer.api(
        "/auth/oauth2/token",
        form({
          grant_type: "authorization_code",
          client_id: pub.client_id,
          code: callback.searchParams.get("code")!,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        }),
      );
      expect(await res.json()).toMatchObject({
        error: "invalid_grant",
        error_description: expect.stringMatching(/expired/),
      });
    } finally {
      Date.now = realNow;
    }
  });

  describe("error paths", () => {
    const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    const base = () => ({
      client_id: pub.client_id,
      response_type: "code",
      redirect_uri: REDIRECT,
      state: "xyz",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const get = (params: Record<string, string>, raw?: string) =>
      fetch(`${authz()}?${raw ?? new URLSearchParams(params)}`, { redirect: "manual" });

    async function expectPage(res: Response, text: RegExp) {
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(await res.text()).toMatch(text);
    }
    async function expectRedirect(res: Response, error: string, state: string | null = "xyz") {
      expect(res.status).toBe(302);
      const loc = new URL(res.headers.get("location")!);
      expect(loc.origin + loc.pathname).toBe(REDIRECT);
      expect(loc.searchParams.get("error")).toBe(error);
      expect(loc.searchParams.get("error_description")).toBeTruthy();
      expect(loc.searchParams.get("state")).toBe(state);
      expect(loc.searchParams.get("iss")).toBe(peer.url);
    }

    it("missing client_id: page", async () => {
      const { client_id: _, ...rest } = base();
      await expectPage(await get(rest), /client_id is missing/);
    });
    it("unknown client_id: page", async () => {
      await expectPage(await get({ ...base(), client_id: "no-such-client" }), /no known client/);
    });
    it("missing redirect_uri: page", async () => {
      const { redirect_uri: _, ...rest } = base();
      await expectPage(await get(rest), /redirect_uri is missing/);
    });
    it("unregistered, prefix-extended or differently-cased redirect_uri: page, never a redirect", async () => {
      for (const uri of [
        "https://evil.example/callback",
        `${REDIRECT}/more`,
        `${REDIRECT}?x=1`,
        REDIRECT.toUpperCase(),
        `${REDIRECT}#frag`,
        "https://app.example/callback/../callback",
      ])
        await expectPage(await get({ ...base(), redirect_uri: uri }), /not registered/);
    });
    it("repeated parameters: page", async () => {
      await expectPage(await get({}, `${new URLSearchParams(base())}&client_id=${pub.client_id}`), /repeated/);
    });
    it("client without the authorization_code grant: unauthorized_client (page, it has no redirect URI)", async () => {
      await expectPage(await get({ ...base(), client_id: cc.client_id }), /not registered/);
    });
    it("a client registered without the authorization_code grant but with a redirect URI: unauthorized_client redirect", async () => {
      peer.svc.oauth.clientResolvers.push(async (id) =>
        id === "cc-with-uri"
          ? {
              clientId: id,
              kind: "client",
              grantTypes: ["client_credentials"],
              tokenEndpointAuthMethod: "client_secret_post",
              redirectUris: [REDIRECT],
              tlsClientAuthSubjectDn: "",
              verifySecret: () => false,
            }
          : undefined,
      );
      await expectRedirect(await get({ ...base(), client_id: "cc-with-uri" }), "unauthorized_client");
    });
    it("state longer than 2048 characters: invalid_request redirect", async () => {
      const res = await get({ ...base(), state: "s".repeat(2049) });
      expect(res.status).toBe(302);
      expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
      expect((await get({ ...base(), state: "s".repeat(2048) })).headers.get("location")).toMatch(
        /^\/api\/auth\/oauth2\/sign-in/,
      );
    });
    it("missing response_type: invalid_request redirect", async () => {
      const { response_type: _, ...rest } = base();
      await expectRedirect(await get(rest), "invalid_request");
    });
    it("response_type token: unsupported_response_type redirect", async () => {
      await expectRedirect(await get({ ...base(), response_type: "token" }), "unsupported_response_type");
    });
    it("missing state: invalid_request redirect without state", async () => {
      const { state: _, ...rest } = base();
      await expectRedirect(await get(rest), "invalid_request", null);
    });
    it("plain PKCE: invalid_request redirect", async () => {
      await expectRedirect(await get({ ...base(), code_challenge_method: "plain" }), "invalid_request");
    });
    it("challenge without method, method without challenge, malformed challenge: invalid_request", async () => {
      const { code_challenge_method: _, ...noMethod } = base();
      await expectRedirect(await get(noMethod), "invalid_request");
      const { code_challenge: __, ...noChallenge } = base();
      await expectRedirect(await get(noChallenge), "invalid_request");
      await expectRedirect(await get({ ...base(), code_challenge: "short" }), "invalid_request");
    });
    it("public client without PKCE: invalid_request redirect", async () => {
      const { code_challenge: _, code_challenge_method: __, ...rest } = base();
      await expectRedirect(await get(rest), "invalid_request");
    });
    it("confidential client without PKCE is accepted (sent to sign in)", async () => {
      const res = await get({
        client_id: confidential.client_id,
        response_type: "code",
        redirect_uri: REDIRECT,
        state: "xyz",
      });
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toMatch(/^\/api\/auth\/oauth2\/sign-in\?/);
    });
    it("cancel on the sign-in page: access_denied redirect", async () => {
      const jar = new CookieJar();
      const res = await jar.fetch(`${authz()}?${new URLSearchParams(base())}`);
      const pageUrl = new URL(res.headers.get("location")!, peer.url).toString();
      const csrf = hiddenField(await (await jar.fetch(pageUrl)).text(), "csrf")!;
      const cancel = await jar.fetch(pageUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrf, action: "cancel" }).toString(),
      });
      await expectRedirect(cancel, "access_denied");
    });
    it("the sign-in page re-checks the request (no page for a bad redirect_uri)", async () => {
      const res = await fetch(
        `${peer.url}/api/auth/oauth2/sign-in?${new URLSearchParams({ ...base(), redirect_uri: "https://evil.example/" })}`,
        { redirect: "manual" },
      );
      await expectPage(res, /not registered/);
    });
    it("wrong password on the page: 401 page with a clear message, no session", async () => {
      const jar = new CookieJar();
      const res = await jar.fetch(`${authz()}?${new URLSearchParams(base())}`);
      const failed = await signInThroughPage(
        jar,
        peer.url,
        res.headers.get("location")!,
        user.name,
        "Wrong-password-1",
      );
      expect(failed.status).toBe(401);
      expect(await failed.text()).toMatch(/Wrong user name or password/);
      expect(jar.has("oauth_session")).toBe(false);
    });
  });
});
