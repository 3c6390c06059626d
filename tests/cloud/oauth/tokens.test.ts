// Refresh rotation and reuse detection, revocation as the resource server sees it, the bearer
// cookie, and verification of issued tokens by an independent verifier through the JWKS.
import { createRemoteJWKSet, jwtVerify } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rotateKeysCommand } from "../../../cloud/cli/keys.js";
import { withPeerDatabaseEnv } from "../../support/test-database.js";
import { keysRepo } from "../../../cloud/oauth/repo/keys.js";
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

describe("token lifecycle", () => {
  let peer: TestPeer;
  let user: { uuid: string; name: string; password: string };
  let admin: string;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = await adminToken(peer);
    user = await createUser(peer, admin);
  });
  afterAll(async () => {
    await peer.stop();
  });
  const me = (token: string) => peer.api("/auth/users/me", { headers: bearer(token) });
  const firstParty = () => oidcConfig(peer, "first-party", oidc.None());

  it("rotates refresh tokens on every use", async () => {
    const t0 = await passwordToken(peer, user.name, user.password);
    const t1 = await oidc.refreshTokenGrant(firstParty(), t0.refresh_token);
    const t2 = await oidc.refreshTokenGrant(firstParty(), t1.refresh_token!);
    expect(new Set([t0.refresh_token, t1.refresh_token, t2.refresh_token]).size).toBe(3);
    expect((await me(t2.access_token)).status).toBe(200);
  });

  it("detects reuse of a refresh token and revokes the whole family, access tokens included", async () => {
    const t0 = await passwordToken(peer, user.name, user.password);
    const t1 = await oidc.refreshTokenGrant(firstParty(), t0.refresh_token);
    const t2 = await oidc.refreshTokenGrant(firstParty(), t1.refresh_token!);
    // An attacker replays the first refresh token.
    await expect(oidc.refreshTokenGrant(firstParty(), t0.refresh_token)).rejects.toMatchObject({
      error: "invalid_grant",
    });
    await expect(oidc.refreshTokenGrant(firstParty(), t2.refresh_token!)).rejects.toMatchObject({
      error: "invalid_grant",
    });
    for (const t of [t0.access_token, t1.access_token, t2.access_token]) expect((await me(t)).status).toBe(401);
    // Another sign-in of the same user is unaffected.
    expect((await me((await passwordToken(peer, user.name, user.password)).access_token)).status).toBe(200);
  });

  it("two concurrent uses of one refresh token: at most one wins, and its tokens end up revoked too", async () => {
    const t0 = await passwordToken(peer, user.name, user.password);
    const results = await Promise.allSettled(
      [0, 1, 2].map(() => oidc.refreshTokenGrant(firstParty(), t0.refresh_token)),
    );
    const won = results.filter((r) => r.status === "fulfilled") as PromiseFulfilledResult<oidc.TokenEndpointResponse>[];
    expect(won.length).toBeLessThanOrEqual(1);
    for (const w of won) {
      expect((await me(w.value.access_token)).status).toBe(401);
      await expect(oidc.refreshTokenGrant(firstParty(), w.value.refresh_token!)).rejects.toMatchObject({
        error: "invalid_grant",
      });
    }
  });

  it("binds refresh tokens to their client", async () => {
    const owner = (await passwordToken(peer, user.name, user.password)).access_token;
    const web = await registerClient(peer, owner, {
      name: "w",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: ["https://w.example/cb"],
    });
    const t0 = await passwordToken(peer, user.name, user.password);
    const res = await peer.api("/auth/oauth2/token", {
      ...form({ grant_type: "refresh_token", refresh_token: t0.refresh_token }),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${web.client_id}:${web.client_secret}`).toString("base64")}`,
      },
    });
    expect(await res.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("revoking an access token is seen by the resource server", async () => {
    const t = await passwordToken(peer, user.name, user.password);
    expect((await me(t.access_token)).status).toBe(200);
    await oidc.tokenRevocation(firstParty(), t.access_token, { token_type_hint: "access_token" });
    const after = await me(t.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toMatch(/Bearer/);
    // The refresh token of that sign-in still works (only the access token was given up).
    expect((await oidc.refreshTokenGrant(firstParty(), t.refresh_token)).access_token).toBeTruthy();
  });

  it("revoking a refresh token (default hint) revokes its family and access tokens", async () => {
    const t = await passwordToken(peer, user.name, user.password);
    const res = await peer.api("/auth/oauth2/revocation", form({ client_id: "first-party", token: t.refresh_token }));
    expect(res.status).toBe(200);
    expect((await me(t.access_token)).status).toBe(401);
    await expect(oidc.refreshTokenGrant(firstParty(), t.refresh_token)).rejects.toMatchObject({
      error: "invalid_grant",
    });
  });

  it("answers 200 for unknown tokens and requires client_id", async () => {
    expect(
      (await peer.api("/auth/oauth2/revocation", form({ client_id: "first-party", token: "garbage" }))).status,
    ).toBe(200);
    const noClient = await peer.api("/auth/oauth2/revocation", form({ token: "garbage" }));
    expect(noClient.status).toBe(400);
    expect(await noClient.json()).toMatchObject({ error: "invalid_request" });
    const badClient = await peer.api("/auth/oauth2/revocation", form({ client_id: "nope", token: "garbage" }));
    expect(badClient.status).toBe(401);
  });

  it("accepts the _bearer_token cookie and revokes the cookie's token when `token` is omitted", async () => {
    const t = await passwordToken(peer, user.name, user.password);
    const cookie = { cookie: `_bearer_token=${t.access_token}` };
    expect((await peer.api("/auth/users/me", { headers: cookie })).status).toBe(200);
    const res = await peer.api("/auth/oauth2/revocation", {
      ...form({ client_id: "first-party", token_type_hint: "access_token" }),
      headers: { ...cookie, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toMatch(/_bearer_token=;/);
    expect((await peer.api("/auth/users/me", { headers: cookie })).status).toBe(401);
  });

  it("refuses forged, tampered, expired and alg=none tokens", async () => {
    const t = (await passwordToken(peer, user.name, user.password)).access_token;
    const [h, p, s] = t.split(".");
    const claims = JSON.parse(Buffer.from(p!, "base64url").toString());
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: "00000000-0000-0000-0000-000000000001" })).toString("base64url")}.${s}`;
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "at+jwt" })).toString("base64url")}.${p}.`;
    for (const bad of [tampered, none, "not-a-jwt", `${h}.${p}.${"A".repeat(86)}`])
      expect((await me(bad)).status).toBe(401);
    const realNow = Date.now;
    Date.now = () => realNow() + 3601_000;
    try {
      expect((await me(t)).status).toBe(401);
    } finally {
      Date.now = realNow;
    }
  });

  it("issued tokens verify with jose against the published JWKS, before and after a key rotation", async () => {
    const jwks = createRemoteJWKSet(new URL(`${peer.url}/api/auth/oauth2/jwks`));
    const old = (await passwordToken(peer, user.name, user.password)).access_token;
    const { payload, protectedHeader } = await jwtVerify(old, jwks, {
      issuer: peer.url,
      algorithms: ["ES256"],
      typ: "at+jwt",
    });
    expect(payload.sub).toBe(user.uuid);
    const raw = await peer.api("/auth/oauth2/jwks");
    expect(raw.headers.get("content-type")).toBe("application/jwk-set+json; charset=utf-8");
    const set: any = await raw.json();
    expect(set.keys).toHaveLength(1);
    expect(set.keys[0]).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: protectedHeader.kid });
    for (const k of set.keys) for (const priv of ["d", "p", "q", "dp", "dq", "qi"]) expect(k[priv]).toBeUndefined();

    const { kid } = await withPeerDatabaseEnv(peer.dataDir, () => rotateKeysCommand({ data: peer.dataDir }));
    await peer.svc.oauth.keys.reload();
    const fresh = (await passwordToken(peer, user.name, user.password)).access_token;
    expect(decodeJwt(fresh).header.kid).toBe(kid);
    const published: any = await (await peer.api("/auth/oauth2/jwks")).json();
    expect(published.keys.map((k: any) => k.kid).sort()).toEqual([kid, protectedHeader.kid].sort());
    const jwks2 = createRemoteJWKSet(new URL(`${peer.url}/api/auth/oauth2/jwks`));
    await expect(jwtVerify(old, jwks2, { issuer: peer.url })).resolves.toBeTruthy();
    await expect(jwtVerify(fresh, jwks2, { issuer: peer.url })).resolves.toBeTruthy();
    expect((await me(old)).status).toBe(200);
  });

  it("a disabled user's tokens stop working", async () => {
    const u = await createUser(peer, admin);
    const t = (await passwordToken(peer, u.name, u.password)).access_token;
    expect((await me(t)).status).toBe(200);
    expect((await peer.api(`/auth/users/${u.uuid}/disable`, { method: "PUT", headers: bearer(admin) })).status).toBe(
      200,
    );
    await new Promise((r) => setTimeout(r, 1100));
    expect((await me(t)).status).toBe(401);
  });
});

describe("revocation across peers sharing one database", () => {
  it("a second peer refuses a token revoked on the first", async () => {
    const a = await startTestPeer();
    const b = await startTestPeer({ dataDir: a.dataDir, config: { publicUrl: "http://shared.example" } });
    try {
      a.svc.config.publicUrl = "http://shared.example";
      const admin = await adminToken(a);
      expect((await b.api("/auth/users/me", { headers: bearer(admin) })).status).toBe(200);
      const t = decodeJwt(admin).claims;
      await a.svc.oauth.revokeAccessToken(t.jti, t.exp);
      const started = Date.now();
      let status = 200;
      // How soon is the revocation list's poll (a few seconds); a busy machine may take longer, so no bound here.
      while (status === 200 && Date.now() - started < 30_000) {
        await new Promise((r) => setTimeout(r, 200));
        status = (await b.api("/auth/users/me", { headers: bearer(admin) })).status;
      }
      expect(status).toBe(401);
    } finally {
      await b.stop();
      await a.stop();
    }
  });
});

describe("access-token lifetime (CLOUD_ACCESS_TOKEN_TTL)", () => {
  let peer: TestPeer;
  beforeAll(async () => {
    peer = await startTestPeer({ config: { accessTokenTtl: 7200 } });
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("is configurable: expires_in, exp - iat and the resource server follow it", async () => {
    const t = await passwordToken(peer, "admin", "Admin-password-1");
    expect(t.expires_in).toBe(7200);
    const { claims } = decodeJwt(t.access_token);
    expect(claims.exp - claims.iat).toBe(7200);
    const realNow = Date.now;
    try {
      Date.now = () => realNow() + 7100_000;
      expect((await peer.api("/auth/users/me", { headers: bearer(t.access_token) })).status).toBe(200);
      Date.now = () => realNow() + 7201_000;
      expect((await peer.api("/auth/users/me", { headers: bearer(t.access_token) })).status).toBe(401);
    } finally {
      Date.now = realNow;
    }
  });

  it("a key rotated by a process assuming a shorter lifetime stays published until this peer's last token with it expires", async () => {
    const saved = process.env.CLOUD_ACCESS_TOKEN_TTL;
    process.env.CLOUD_ACCESS_TOKEN_TTL = "3600"; // the operator's shell lacks the server's setting
    let kid: string;
    try {
      ({ kid } = await withPeerDatabaseEnv(peer.dataDir, () => rotateKeysCommand({ data: peer.dataDir })));
    } finally {
      if (saved === undefined) delete process.env.CLOUD_ACCESS_TOKEN_TTL;
      else process.env.CLOUD_ACCESS_TOKEN_TTL = saved;
    }
    // Until its next reload the peer still signs with the old key.
    const late = (await passwordToken(peer, "admin", "Admin-password-1")).access_token;
    const old = decodeJwt(late);
    expect(old.header.kid).not.toBe(kid);
    await peer.svc.oauth.keys.reload();
    expect(decodeJwt((await passwordToken(peer, "admin", "Admin-password-1")).access_token).header.kid).toBe(kid);
    const publishedAt = async (sec: number) =>
      (await keysRepo.published(peer.svc.db, new Date(sec * 1000))).map((k) => k.kid);
    expect(await publishedAt(old.claims.exp - 1)).toContain(old.header.kid);
    expect(await publishedAt(old.claims.exp + 3600)).not.toContain(old.header.kid);
  });
});
