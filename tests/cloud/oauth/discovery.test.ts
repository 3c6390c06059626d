// OpenID discovery and RFC 7662 introspection, driven by openid-client as a resource server or app
// would: discover the peer, get a token, introspect it, revoke it, introspect again.
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminToken, bearer, createUser, decodeJwt, form, passwordToken, registerClient } from "./helpers.js";

describe("OAuth: OpenID discovery and token introspection", () => {
  let peer: TestPeer;
  let admin: string;
  let user: { uuid: string; name: string; password: string };
  let userToken: string;
  /** A client-credentials client (client_secret_post) of the user. */
  let service: { client_id: string; client_secret: string };
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = await adminToken(peer);
    user = await createUser(peer, admin);
    userToken = (await passwordToken(peer, user.name, user.password)).access_token;
    service = await registerClient(peer, userToken, { name: "resource server", grant_type: "client_credentials" });
  });
  afterAll(() => peer?.stop());

  const discover = (clientId: string, auth: oidc.ClientAuth) =>
    oidc.discovery(new URL(peer.url), clientId, undefined, auth, { execute: [oidc.allowInsecureRequests] });
  const introspect = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    peer.api("/auth/oauth2/introspection", {
      ...form(fields),
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    });

  it("serves a discovery document consistent with the token endpoint and the JWKS", async () => {
    const config = await discover(service.client_id, oidc.ClientSecretPost(service.client_secret));
    const meta = config.serverMetadata();
    expect(meta).toMatchObject({
      issuer: peer.url,
      authorization_endpoint: `${peer.url}/api/auth/oauth2/authorization`,
      token_endpoint: `${peer.url}/api/auth/oauth2/token`,
      revocation_endpoint: `${peer.url}/api/auth/oauth2/revocation`,
      introspection_endpoint: `${peer.url}/api/auth/oauth2/introspection`,
      jwks_uri: `${peer.url}/api/auth/oauth2/jwks`,
      code_challenge_methods_supported: ["S256"],
      subject_types_supported: ["public"],
    });
    expect(meta.grant_types_supported).toEqual(
      expect.arrayContaining(["authorization_code", "refresh_token", "client_credentials", "password"]),
    );
    expect(meta.introspection_endpoint_auth_methods_supported).not.toContain("none");
    // The RFC 8414 document says the same about the endpoints.
    const rfc8414: any = await (await fetch(`${peer.url}/.well-known/oauth-authorization-server`)).json();
    for (const k of [
      "issuer",
      "token_endpoint",
      "jwks_uri",
      "revocation_endpoint",
      "introspection_endpoint",
      "grant_types_supported",
    ])
      expect(rfc8414[k]).toEqual(meta[k]);

    // A token from the discovered token endpoint is signed with a key of the discovered JWKS, in a listed algorithm.
    const t = await oidc.clientCredentialsGrant(config);
    const { header, claims } = decodeJwt(t.access_token);
    const jwks: any = await (await fetch(meta.jwks_uri!)).json();
    expect(jwks.keys.map((k: { kid: string }) => k.kid)).toContain(header.kid);
    expect(meta.id_token_signing_alg_values_supported).toContain(header.alg);
    expect(claims.iss).toBe(meta.issuer);
  });

  it("introspects access tokens for a confidential client, and answers inactive once revoked", async () => {
    const config = await discover(service.client_id, oidc.ClientSecretPost(service.client_secret));
    const own = await oidc.clientCredentialsGrant(config);
    const info = await oidc.tokenIntrospection(config, userToken);
    expect(info).toMatchObject({
      active: true,
      token_type: "Bearer",
      client_id: "first-party",
      sub: user.uuid,
      sub_kind: "user",
      username: user.name,
      iss: peer.url,
    });
    expect(info.scope!.split(" ").length).toBeGreaterThan(0);
    expect(info.exp! > Date.now() / 1000).toBe(true);
    expect(await oidc.tokenIntrospection(config, own.access_token)).toMatchObject({
      active: true,
      client_id: service.client_id,
      sub: user.uuid,
    });

    await oidc.tokenRevocation(config, own.access_token, { token_type_hint: "access_token" });
    expect(await oidc.tokenIntrospection(config, own.access_token)).toEqual({ active: false });
    expect(await oidc.tokenIntrospection(config, "not a token")).toEqual({ active: false });
    // A tampered signature is no token either.
    const [h, p] = userToken.split(".");
    expect(await oidc.tokenIntrospection(config, `${h}.${p}.${Buffer.alloc(64).toString("base64url")}`)).toEqual({
      active: false,
    });
  });

  it("answers inactive for a disabled user's token", async () => {
    const other = await createUser(peer, admin);
    const t = (await passwordToken(peer, other.name, other.password)).access_token;
    const config = await discover(service.client_id, oidc.ClientSecretPost(service.client_secret));
    expect((await oidc.tokenIntrospection(config, t)).active).toBe(true);
    expect(
      (await peer.api(`/auth/users/${other.uuid}/disable`, { method: "PUT", headers: bearer(admin) })).status,
    ).toBe(200);
    // A user's standing is cached for a second, as for every bearer request.
    await expect.poll(async () => (await oidc.tokenIntrospection(config, t)).active, { timeout: 30_000 }).toBe(false);
    expect(await oidc.tokenIntrospection(config, t)).toEqual({ active: false });
  });

  it("shows a refresh token only to the client it was issued to, and only until it is used", async () => {
    const app = await registerClient(peer, userToken, {
      name: "app",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: ["https://app.example/cb"],
    });
    const appConfig = await discover(app.client_id, oidc.ClientSecretBasic(app.client_secret));
    const t = await oidc.genericGrantRequest(appConfig, "password", { username: user.name, password: user.password });
    expect(t.refresh_token).toBeTruthy();
    expect(
      await oidc.tokenIntrospection(appConfig, t.refresh_token!, { token_type_hint: "refresh_token" }),
    ).toMatchObject({ active: true, client_id: app.client_id, sub: user.uuid });
    const serviceConfig = await discover(service.client_id, oidc.ClientSecretPost(service.client_secret));
    expect(await oidc.tokenIntrospection(serviceConfig, t.refresh_token!)).toEqual({ active: false });
    await oidc.refreshTokenGrant(appConfig, t.refresh_token!);
    expect(await oidc.tokenIntrospection(appConfig, t.refresh_token!)).toEqual({ active: false });
  });

  it("refuses public clients, wrong secrets and requests without a token", async () => {
    const none = await introspect({ client_id: "first-party", token: userToken });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: "invalid_client" });
    const wrong = await introspect({ client_id: service.client_id, client_secret: "wrong", token: userToken });
    expect(wrong.status).toBe(401);
    const publicApp = await registerClient(peer, userToken, {
      name: "spa",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "none",
      redirect_uris: ["https://spa.example/cb"],
    });
    const pub = await introspect({ client_id: publicApp.client_id, token: userToken });
    expect(pub.status).toBe(401);
    expect(JSON.stringify(await pub.json())).not.toContain(userToken);
    const missing = await introspect({ client_id: service.client_id, client_secret: service.client_secret });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: "invalid_request" });
    const ok = await introspect({
      client_id: service.client_id,
      client_secret: service.client_secret,
      token: userToken,
    });
    expect(ok.headers.get("cache-control")).toBe("no-store");
  });
});
