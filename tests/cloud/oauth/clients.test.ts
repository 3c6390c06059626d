// OAuth2 client registration and management: every operation, the registration rules, the spec's
// limits at the boundary and one past it, named secrets shown once, last_used_at.
import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminToken, bearer, createUser, form, passwordToken, registerClient } from "./helpers.js";

describe("OAuth2 clients", () => {
  let peer: TestPeer;
  let admin: string;
  let user: { uuid: string; name: string; password: string };
  let token: string;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = await adminToken(peer);
    user = await createUser(peer, admin);
    token = (await passwordToken(peer, user.name, user.password)).access_token;
  });
  afterAll(async () => {
    await peer.stop();
  });
  const mine = (p = "", init: RequestInit & { json?: unknown } = {}) =>
    peer.api(`/auth/users/me/clients${p}`, { ...init, headers: { ...bearer(token), ...(init.headers as object) } });
  const create = (json: unknown) => mine("", { method: "POST", json });

  it("registers the three kinds of the spec with the right shapes", async () => {
    const conf = await registerClient(peer, token, {
      name: "server app",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: ["https://app.example/cb"],
    });
    expect(conf).toMatchObject({
      name: "server app",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: ["https://app.example/cb"],
      audiences: [],
      tls_client_auth_subject_dn: "",
      user_uuid: user.uuid,
    });
    expect(conf.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(conf.secrets).toEqual([
      {
        id: expect.any(Number),
        name: "default",
        secret: conf.client_secret,
        last_used_at: null,
        created_at: conf.created_at,
      },
    ]);
    expect(conf.scopes).toContain("me:a");
    expect(conf.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);

    const pub = await registerClient(peer, token, {
      name: "mobile",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "none",
      redirect_uris: ["com.example.app:/oauth2redirect", "http://127.0.0.1:8123/cb"],
    });
    expect(pub.client_secret).toBeUndefined();
    expect(pub.secrets).toEqual([]);

    const cc = await registerClient(peer, token, { name: "background", grant_type: "client_credentials" });
    expect(cc).toMatchObject({
      grant_types: ["client_credentials"],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: "client_secret_post",
    });
    expect(cc.client_secret).toBeTruthy();
  });

  it("accepts case-insensitive keys (spec)", async () => {
    const res = await create({ Name: "cased", Grant_Type: "client_credentials" });
    expect(res.status).toBe(201);
  });

  it("refuses what the registration rules forbid", async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: "x", grant_type: "authorization_code", redirect_uris: [] }, "redirect_uris"],
      [{ name: "x", grant_type: "authorization_code" }, "redirect_uris"],
      [
        { name: "x", grant_type: "authorization_code", redirect_uris: ["https://a.example/cb#frag"] },
        "redirect_uris.0",
      ],
      [{ name: "x", grant_type: "authorization_code", redirect_uris: ["/relative"] }, "redirect_uris.0"],
      [{ name: "x", grant_type: "authorization_code", redirect_uris: ["http://public.example/cb"] }, "redirect_uris.0"],
      [{ name: "x", grant_type: "authorization_code", redirect_uris: ["javascript:alert(1)"] }, "redirect_uris.0"],
      [{ name: "x", grant_type: "client_credentials", redirect_uris: ["https://a.example/cb"] }, "redirect_uris"],
      [
        { name: "x", grant_type: "client_credentials", token_endpoint_auth_method: "none" },
        "token_endpoint_auth_method",
      ],
      [
        { name: "x", grant_type: "client_credentials", token_endpoint_auth_method: "tls_client_auth" },
        "tls_client_auth_subject_dn",
      ],
      [{ name: "x", grant_type: "implicit" }, "grant_type"],
      [
        { name: "x", grant_type: "client_credentials", token_endpoint_auth_method: "private_key_jwt" },
        "token_endpoint_auth_method",
      ],
      [{ grant_type: "client_credentials" }, "name"],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const err: any = await res.json();
      expect(err.type).toBe("invalid_request");
      expect(Object.keys(err.properties ?? {}), JSON.stringify(body)).toContain(field);
    }
  });

  it("enforces the limits at the boundary and one past it", async () => {
    const uri = (n: number) => `https://a.example/${"p".repeat(n - "https://a.example/".length)}`;
    const ok = [
      { name: "n".repeat(256), grant_type: "client_credentials" },
      {
        name: "ten",
        grant_type: "authorization_code",
        redirect_uris: Array.from({ length: 10 }, (_, i) => `https://a.example/${i}`),
      },
      { name: "long uri", grant_type: "authorization_code", redirect_uris: [uri(256)] },
      {
        name: "dn",
        grant_type: "client_credentials",
        token_endpoint_auth_method: "tls_client_auth",
        tls_client_auth_subject_dn: `CN=${"d".repeat(509)}`,
      },
    ];
    for (const body of ok) expect((await create(body)).status, JSON.stringify(body).slice(0, 80)).toBe(201);
    const bad = [
      { name: "", grant_type: "client_credentials" },
      { name: "n".repeat(257), grant_type: "client_credentials" },
      {
        name: "eleven",
        grant_type: "authorization_code",
        redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`),
      },
      { name: "long uri", grant_type: "authorization_code", redirect_uris: [uri(257)] },
      {
        name: "dn",
        grant_type: "client_credentials",
        token_endpoint_auth_method: "tls_client_auth",
        tls_client_auth_subject_dn: `CN=${"d".repeat(510)}`,
      },
    ];
    for (const body of bad) expect((await create(body)).status, JSON.stringify(body).slice(0, 80)).toBe(400);
  });

  it("gets, lists (filters, sort, paging), updates and deletes own clients", async () => {
    const a = await registerClient(peer, token, {
      name: "zeta-list",
      grant_type: "authorization_code",
      redirect_uris: ["https://z.example/cb"],
      token_endpoint_auth_method: "client_secret_basic",
    });
    const b = await registerClient(peer, token, { name: "alpha-list", grant_type: "client_credentials" });
    const got: any = await (await mine(`/${a.client_id}`)).json();
    expect(got.client_id).toBe(a.client_id);
    expect(got.client_secret).toBeUndefined();
    expect(got.secrets[0].secret).toBe("");

    const list: any = await (await mine("?per_page=200")).json();
    const names = list.items.map((c: any) => c.name);
    expect(names).toEqual([...names].sort());
    expect(list.page).toMatchObject({ next: false, prev: false, total_page: 1 });

    const filtered: any = await (
      await peer.api(`/auth/clients?name[]=-list&sort=name-`, { headers: bearer(admin) })
    ).json();
    expect(filtered.items.map((c: any) => c.name)).toEqual(["zeta-list", "alpha-list"]);
    const exact: any = await (
      await peer.api(`/auth/clients?name[]=${encodeURIComponent('"alpha-list"')}`, { headers: bearer(admin) })
    ).json();
    expect(exact.items.map((c: any) => c.client_id)).toEqual([b.client_id]);
    const byId: any = await (
      await peer.api(`/auth/clients?id[]=${a.client_id}&id[]=${b.client_id}`, { headers: bearer(admin) })
    ).json();
    expect(byId.page.total_count).toBe(2);
    const paged: any = await (await peer.api(`/auth/clients?per_page=1&page=2`, { headers: bearer(admin) })).json();
    expect(paged.items).toHaveLength(1);
    expect(paged.page).toMatchObject({ prev: true, prev_page: 1 });

    const upd = await mine(`/${a.client_id}`, {
      method: "PATCH",
      json: { name: "renamed", redirect_uris: ["https://z.example/cb2"] },
    });
    expect(upd.status).toBe(200);
    expect(await upd.json()).toMatchObject({ name: "renamed", redirect_uris: ["https://z.example/cb2"] });
    expect(
      (await mine(`/${b.client_id}`, { method: "PATCH", json: { redirect_uris: ["https://z.example/cb"] } })).status,
    ).toBe(400);
    expect(
      (await mine(`/${a.client_id}`, { method: "PATCH", json: { redirect_uris: ["https://z.example/#x"] } })).status,
    ).toBe(400);

    expect((await mine(`/${b.client_id}`, { method: "DELETE" })).status).toBe(204);
    expect((await mine(`/${b.client_id}`)).status).toBe(404);
    const gone = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "client_credentials", client_id: b.client_id, client_secret: b.client_secret }),
    );
    expect(gone.status).toBe(401);
  });

  it("keeps other users' clients out of /users/me and lets the guard decide on /auth/clients", async () => {
    const c = await registerClient(peer, token, { name: "private", grant_type: "client_credentials" });
    const other = await createUser(peer, admin);
    const otherToken = (await passwordToken(peer, other.name, other.password)).access_token;
    expect((await peer.api(`/auth/users/me/clients/${c.client_id}`, { headers: bearer(otherToken) })).status).toBe(404);
    expect(
      (await peer.api(`/auth/users/me/clients/${c.client_id}`, { method: "DELETE", headers: bearer(otherToken) }))
        .status,
    ).toBe(404);
    expect(
      (await peer.api(`/auth/clients/${c.client_id}`, { method: "DELETE", headers: bearer(otherToken) })).status,
    ).toBe(403);
    expect((await peer.api(`/auth/clients/${c.client_id}`, { headers: bearer(admin) })).status).toBe(200);
    const ofUser: any = await (await peer.api(`/auth/users/${user.uuid}/clients`, { headers: bearer(admin) })).json();
    expect(ofUser.items.every((x: any) => x.user_uuid === user.uuid)).toBe(true);
    expect(
      (
        await peer.api(`/auth/clients/${c.client_id}`, {
          method: "PATCH",
          headers: bearer(admin),
          json: { name: "by admin" },
        })
      ).status,
    ).toBe(200);
    expect((await peer.api(`/auth/clients/nope`, { headers: bearer(admin) })).status).toBe(404);
    expect((await peer.api(`/auth/users/me/clients`)).status).toBe(401);
  });

  it("accepts an API token (X-Intdash-Token and X-Service-Token) for registration", async () => {
    const t: any = await (
      await peer.api("/auth/users/me/tokens", { method: "POST", headers: bearer(token), json: { name: "reg" } })
    ).json();
    for (const header of ["X-Intdash-Token", "X-Service-Token"]) {
      const res = await peer.api("/auth/users/me/clients", {
        method: "POST",
        headers: { [header]: t.token },
        json: { name: `via ${header}`, grant_type: "client_credentials" },
      });
      expect(res.status).toBe(201);
      expect(((await res.json()) as any).user_uuid).toBe(user.uuid);
    }
  });

  it("manages several named secrets: shown once, stored hashed, last_used_at kept, revocable", async () => {
    const c = await registerClient(peer, token, { name: "rotating", grant_type: "client_credentials" });
    const s2res = await mine(`/${c.client_id}/secrets`, { method: "POST", json: { name: "second" } });
    expect(s2res.status).toBe(201);
    const s2: any = await s2res.json();
    expect(s2).toMatchObject({ name: "second", last_used_at: null });
    expect(s2.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await mine(`/${c.client_id}/secrets`, { method: "POST", json: { name: "" } })).status).toBe(400);
    expect((await mine(`/${c.client_id}/secrets`, { method: "POST", json: { name: "s".repeat(511) } })).status).toBe(
      201,
    );
    expect((await mine(`/${c.client_id}/secrets`, { method: "POST", json: { name: "s".repeat(512) } })).status).toBe(
      400,
    );

    for (const secret of [c.client_secret, s2.secret]) {
      const r = await peer.api(
        "/auth/oauth2/token",
        form({ grant_type: "client_credentials", client_id: c.client_id, client_secret: secret }),
      );
      expect(r.status).toBe(200);
    }
    const listed: any = await (await mine(`/${c.client_id}`)).json();
    expect(listed.secrets.map((s: any) => s.name)).toEqual(["default", "second", "s".repeat(511)]);
    expect(listed.secrets.every((s: any) => s.secret === "")).toBe(true);
    expect(listed.secrets[0].last_used_at).toMatch(/Z$/);
    expect(listed.secrets[1].last_used_at).toMatch(/Z$/);
    expect(listed.secrets[2].last_used_at).toBeNull();
    const stored = await peer.svc.db.all<{ digest: string }>(
      "SELECT digest FROM oauth_client_secrets WHERE client_id = ?",
      [c.client_id],
    );
    // Only the SHA-256 digest is stored, never the secret.
    expect(stored.map((r) => r.digest)).toContain(crypto.createHash("sha256").update(s2.secret).digest("hex"));
    expect(JSON.stringify(stored)).not.toContain(s2.secret);

    expect((await mine(`/${c.client_id}/secrets/${listed.secrets[0].id}`, { method: "DELETE" })).status).toBe(204);
    const old = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "client_credentials", client_id: c.client_id, client_secret: c.client_secret }),
    );
    expect(old.status).toBe(401);
    expect((await mine(`/${c.client_id}/secrets/${listed.secrets[0].id}`, { method: "DELETE" })).status).toBe(404);
    // The admin variant.
    const byAdmin = await peer.api(`/auth/clients/${c.client_id}/secrets`, {
      method: "POST",
      headers: bearer(admin),
      json: { name: "admin-made" },
    });
    expect(byAdmin.status).toBe(201);
    const pub = await registerClient(peer, token, {
      name: "pub",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "none",
      redirect_uris: ["https://p.example/cb"],
    });
    expect((await mine(`/${pub.client_id}/secrets`, { method: "POST", json: { name: "no" } })).status).toBe(400);
  });

  it("appears in the OpenAPI document with the real operationIds", async () => {
    const doc: any = await (await peer.api("/openapi.json")).json();
    const ops = Object.values(doc.paths).flatMap((p: any) => Object.values(p).map((o: any) => o.operationId));
    for (const id of [
      "listOAuth2Clients",
      "getOAuth2Client",
      "updateOAuth2Client",
      "deleteOAuth2Client",
      "listUsersOAuth2Clients",
      "listMyOAuth2Clients",
      "createMyOAuth2Clients",
      "getMyOAuth2Client",
      "updateMyOAuth2Client",
      "deleteMyOAuth2Client",
      "issueToken",
      "oauth2Authorization",
      "reovokeToken",
      "authOauth2JwksGet",
    ])
      expect(ops).toContain(id);
    expect(doc.paths["/auth/oauth2/token"].post.requestBody.content["application/x-www-form-urlencoded"]).toBeTruthy();
  });
});
