// Every grant through a published OAuth 2.0 client library (openid-client), against a real peer.
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
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

describe("token endpoint grants with openid-client", () => {
  let peer: TestPeer;
  let admin: string;
  let user: { uuid: string; name: string; password: string };
  let userToken: string;
  beforeAll(async () => {
    peer = await startTestPeer({ config: { signInWaitSeconds: 60 } });
    admin = await adminToken(peer);
    user = await createUser(peer, admin);
    userToken = (await passwordToken(peer, user.name, user.password)).access_token;
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("client_credentials (client_secret_post): a JWT for the owner, no refresh token, no-store", async () => {
    const c = await registerClient(peer, userToken, {
      name: "backend",
      grant_type: "client_credentials",
      token_endpoint_auth_method: "client_secret_post",
    });
    expect(c.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const config = oidcConfig(peer, c.client_id, oidc.ClientSecretPost(c.client_secret));
    const tokens = await oidc.clientCredentialsGrant(config);
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.expires_in).toBe(3600);
    const { header, claims } = decodeJwt(tokens.access_token);
    expect(header).toMatchObject({ alg: "ES256", typ: "at+jwt" });
    expect(typeof header.kid).toBe("string");
    expect(claims).toMatchObject({ iss: peer.url, sub: user.uuid, client_id: c.client_id, sub_kind: "user" });
    expect(claims.exp - claims.iat).toBe(3600);
    expect(tokens.scope).toBe(claims.scope);
    const me = await peer.api("/auth/users/me", { headers: bearer(tokens.access_token) });
    expect(me.status).toBe(200);
    expect(((await me.json()) as any).uuid).toBe(user.uuid);
    // Raw response headers (the library hides them).
    const raw = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "client_credentials", client_id: c.client_id, client_secret: c.client_secret }),
    );
    expect(raw.headers.get("cache-control")).toBe("no-store");
    // Browser apps (public SPA clients) may read token answers cross-origin.
    expect(raw.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("publishes RFC 8414 metadata that openid-client discovers", async () => {
    const c = await registerClient(peer, userToken, { name: "discovering", grant_type: "client_credentials" });
    const config = await oidc.discovery(
      new URL(peer.url),
      c.client_id,
      undefined,
      oidc.ClientSecretPost(c.client_secret),
      {
        algorithm: "oauth2",
        execute: [oidc.allowInsecureRequests],
      },
    );
    const meta = config.serverMetadata();
    expect(meta).toMatchObject({
      issuer: peer.url,
      token_endpoint: `${peer.url}/api/auth/oauth2/token`,
      code_challenge_methods_supported: ["S256"],
    });
    expect((await oidc.clientCredentialsGrant(config)).access_token).toBeTruthy();
  });

  it("client_credentials (client_secret_basic)", async () => {
    const c = await registerClient(peer, userToken, {
      name: "basic-backend",
      grant_type: "client_credentials",
      token_endpoint_auth_method: "client_secret_basic",
    });
    const tokens = await oidc.clientCredentialsGrant(
      oidcConfig(peer, c.client_id, oidc.ClientSecretBasic(c.client_secret)),
    );
    expect(decodeJwt(tokens.access_token).claims.client_id).toBe(c.client_id);
    // The registered method is enforced: the same secret by post is refused.
    await expect(
      oidc.clientCredentialsGrant(oidcConfig(peer, c.client_id, oidc.ClientSecretPost(c.client_secret))),
    ).rejects.toMatchObject({ error: "invalid_client" });
  });

  it("password grant and refresh_token grant (first-party client)", async () => {
    const res = await passwordToken(peer, user.name, user.password);
    expect(res).toMatchObject({ token_type: "bearer", expires_in: 3600, refresh_token_expires_in: 30 * 24 * 3600 });
    expect(res.scope.split(" ")).toContain("me:a");
    const config = oidcConfig(peer, "first-party", oidc.None());
    const refreshed = await oidc.refreshTokenGrant(config, res.refresh_token);
    expect(refreshed.refresh_token).not.toBe(res.refresh_token);
    expect(decodeJwt(refreshed.access_token).claims.sub).toBe(user.uuid);
  });

  it("password grant through openid-client with a registered confidential client", async () => {
    const c = await registerClient(peer, userToken, {
      name: "web",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: ["https://app.example/cb"],
    });
    const config = oidcConfig(peer, c.client_id, oidc.ClientSecretBasic(c.client_secret));
    const tokens = await oidc.genericGrantRequest(config, "password", { username: user.name, password: user.password });
    expect(decodeJwt(tokens.access_token).claims).toMatchObject({ sub: user.uuid, client_id: c.client_id });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).toBeTruthy();
    await expect(
      oidc.genericGrantRequest(config, "password", { username: user.name, password: "Wrong-password-1" }),
    ).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("refuses wrong credentials the RFC 6749 5.2 way", async () => {
    const c = await registerClient(peer, userToken, { name: "cc", grant_type: "client_credentials" });
    const bad = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "client_credentials", client_id: c.client_id, client_secret: "nope" }),
    );
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ error: "invalid_client" });
    const basic = await peer.api("/auth/oauth2/token", {
      ...form({ grant_type: "client_credentials" }),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${c.client_id}:nope`).toString("base64")}`,
      },
    });
    expect(basic.status).toBe(401);
    expect(basic.headers.get("www-authenticate")).toMatch(/^Basic/);
    const unsupported = await peer.api("/auth/oauth2/token", form({ grant_type: "implicit" }));
    expect(unsupported.status).toBe(400);
    expect(await unsupported.json()).toMatchObject({ error: "unsupported_grant_type" });
    const missing = await peer.api("/auth/oauth2/token", form({}));
    expect(await missing.json()).toMatchObject({ error: "invalid_request" });
    // RFC 6749 5.2: a repeated parameter is invalid_request (also when the URI carries a query).
    const c2 = await registerClient(peer, userToken, { name: "cc2", grant_type: "client_credentials" });
    const twice = `grant_type=client_credentials&client_id=${c2.client_id}&client_secret=${c2.client_secret}&client_secret=${c2.client_secret}`;
    for (const p of ["/auth/oauth2/token", "/auth/oauth2/token?x=1"]) {
      const repeated = await peer.api(p, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: twice,
      });
      expect(repeated.status, p).toBe(400);
      expect(await repeated.json()).toMatchObject({
        error: "invalid_request",
        error_description: expect.stringMatching(/client_secret/),
      });
    }
    const json = await peer.api("/auth/oauth2/token", { method: "POST", json: { grant_type: "password" } });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: "invalid_request" });
  });

  it("a temporary password yields a token that may only change the password", async () => {
    const created: any = await (
      await peer.api("/auth/users", {
        method: "POST",
        headers: bearer(admin),
        json: { name: `temp${process.pid}`, role_uuids: ["751d7649-7fff-45ab-aecd-9c890f22061c"] },
      })
    ).json();
    const t = await passwordToken(peer, created.name, created.password.temporary_password);
    expect(t.scope).toBe("temporary");
    expect(decodeJwt(t.access_token).claims.restricted).toBe("password_change");
    expect((await peer.api("/auth/users/me/clients", { headers: bearer(t.access_token) })).status).toBe(403);
    expect((await peer.api("/auth/users/me", { headers: bearer(t.access_token) })).status).toBe(200);
    // Once the password is changed, refreshing yields an unrestricted token.
    const changed = await peer.api("/auth/users/me/password", {
      method: "PUT",
      headers: bearer(t.access_token),
      json: { password: "Changed-password-1", old_password: created.password.temporary_password },
    });
    expect(changed.status).toBe(200);
    // At once: a grant reads the user's standing fresh (bearer checks may use one cached for a second).
    const refreshed = await oidc.refreshTokenGrant(oidcConfig(peer, "first-party", oidc.None()), t.refresh_token);
    expect(refreshed.scope).not.toBe("temporary");
    expect(decodeJwt(refreshed.access_token).claims.restricted).toBeUndefined();
    expect((await peer.api("/auth/users/me/clients", { headers: bearer(refreshed.access_token) })).status).toBe(200);
  });

  it("an expired password yields a token that may only change the password", async () => {
    const u = await createUser(peer, admin);
    const realNow = Date.now;
    Date.now = () => realNow() + 366 * 86400_000; // past the default 365-day password lifetime
    try {
      const t = await passwordToken(peer, u.name, u.password);
      expect(t.scope).toBe("temporary");
      expect(decodeJwt(t.access_token).claims.restricted).toBe("password_change");
      expect((await peer.api("/auth/users/me/clients", { headers: bearer(t.access_token) })).status).toBe(403);
      expect((await peer.api("/auth/users/me", { headers: bearer(t.access_token) })).status).toBe(200);
    } finally {
      Date.now = realNow;
    }
  });

  it("counts failed password grants into the back-off: the right password then waits too, as a wrong one does", async () => {
    const victim = await createUser(peer, admin);
    for (let i = 0; i < 5; i++) {
      const r = await peer.api(
        "/auth/oauth2/token",
        form({ grant_type: "password", username: victim.name, password: "Wrong-password-1" }),
      );
      expect(r.status).toBe(400);
    }
    const r = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "password", username: victim.name, password: victim.password }),
    );
    expect(r.status).toBe(429);
    const body: any = await r.json();
    expect(body.error).toBe("temporarily_unavailable");
    const wrong = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "password", username: victim.name, password: "Other-wrong-1" }),
    );
    expect(wrong.status).toBe(429);
    expect(((await wrong.json()) as any).error_description).toBe(body.error_description);
  });
});
