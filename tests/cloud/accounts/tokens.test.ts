import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestPeer } from "../harness.js";
import { TS, caller, createUser, expectError, startPeerWithAdmin, tokenOf, type Call } from "./helpers.js";

describe("API tokens", () => {
  let peer: TestPeer;
  let admin: Call;
  beforeAll(async () => ({ peer, admin } = await startPeerWithAdmin()));
  afterAll(() => peer?.stop());

  it("creates a token shown once, lists without secrets, renames and deletes", async () => {
    const u = await createUser(admin, "olga");
    const c = await admin(`/auth/users/${u.uuid}/tokens`, {
      method: "POST",
      json: { NAME: "ci", expired_at: "2999-01-01T00:00:00+09:00" },
    });
    expect(c.status).toBe(201);
    expect(Object.keys(c.body).sort()).toEqual([
      "created_at",
      "expired_at",
      "id",
      "last_used_at",
      "name",
      "scopes",
      "token",
      "updated_at",
    ]);
    expect(c.body).toMatchObject({ name: "ci", expired_at: "2998-12-31T15:00:00Z", last_used_at: null });
    expect(c.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(c.body.scopes.map((s: any) => s.name)).toContain("me:a");
    expect(c.body.scopes[0].created_at).toBeUndefined();
    const list = await admin(`/auth/users/${u.uuid}/tokens`);
    expect(list.status).toBe(200);
    expect(list.body.page).toEqual({ next: false, prev: false, total_page: 1, total_count: 1 });
    expect(list.body.items[0].token).toBeUndefined();
    expect(list.body.items[0].scopes[0].created_at).toMatch(TS);
    expect(JSON.stringify(list.body)).not.toContain(c.body.token);
    const dup = await admin(`/auth/users/${u.uuid}/tokens`, { method: "POST", json: { name: "ci" } });
    expectError(dup, 409, "conflict");
    expect(dup.body.properties).toEqual({ name: "already exist" });
    const r = await admin(`/auth/users/${u.uuid}/tokens/${c.body.id}`, { method: "PATCH", json: { name: "ci-2" } });
    expect(r.status).toBe(200);
    expect(r.body.name).toBe("ci-2");
    expect(r.body.token).toBeUndefined();
    expectError(await admin(`/auth/users/${u.uuid}/tokens/999999`, { method: "PATCH", json: { name: "x" } }), 404);
    expect((await admin(`/auth/users/${u.uuid}/tokens/${c.body.id}`, { method: "DELETE" })).status).toBe(204);
    expectError(await admin(`/auth/users/${u.uuid}/tokens/${c.body.id}`, { method: "DELETE" }), 404);
    expectError(await caller(peer, c.body.token)("/auth/users/me"), 401, "unauthorized");
  });

  it("authenticates with X-Intdash-Token and X-Service-Token and keeps last_used_at", async () => {
    const u = await createUser(admin, "paul");
    const token = await tokenOf(peer, admin, u, "Secret-pass-77");
    for (const header of ["X-Intdash-Token", "X-Service-Token"]) {
      const me = await caller(peer, token, header)("/auth/users/me");
      expect(me.status).toBe(200);
      expect(me.body.name).toBe("paul");
    }
    const list = await caller(peer, token)("/auth/users/me/tokens");
    expect(list.body.items[0].last_used_at).toMatch(TS);
    const bad = await caller(peer, "not-a-token")("/auth/users/me");
    expectError(bad, 401, "unauthorized");
    expect(bad.headers.get("www-authenticate")).toContain("X-Intdash-Token");
    expectError(await caller(peer)("/auth/users/me"), 401);
  });

  it("refuses expired tokens and tokens of disabled users", async () => {
    const u = await createUser(admin, "quinn");
    await tokenOf(peer, admin, u, "Secret-pass-77");
    const c = await admin(`/auth/users/${u.uuid}/tokens`, {
      method: "POST",
      json: { name: "short", expired_at: new Date(Date.now() + 1500).toISOString() },
    });
    expect(c.status).toBe(201);
    const me = caller(peer, c.body.token);
    expect((await me("/auth/users/me")).status).toBe(200);
    expect(
      (await admin("/auth/users/tokens/introspection", { method: "POST", json: { token: c.body.token } })).body.active,
    ).toBe(true);
    await new Promise((r) => setTimeout(r, 1600));
    expectError(await me("/auth/users/me"), 401);
    expect(
      (await admin("/auth/users/tokens/introspection", { method: "POST", json: { token: c.body.token } })).body,
    ).toEqual({ active: false });
    expectError(
      await admin(`/auth/users/${u.uuid}/tokens`, {
        method: "POST",
        json: { name: "past", expired_at: "2000-01-01T00:00:00Z" },
      }),
      400,
    );
    const d = await admin(`/auth/users/${u.uuid}/tokens`, { method: "POST", json: { name: "d" } });
    await admin(`/auth/users/${u.uuid}/disable`, { method: "PUT" });
    expectError(await caller(peer, d.body.token)("/auth/users/me"), 401);
    expect(
      (await admin("/auth/users/tokens/introspection", { method: "POST", json: { token: d.body.token } })).body,
    ).toEqual({ active: false });
  });

  it("introspects a token with the extra fields", async () => {
    const u = await createUser(admin, "rita");
    const c = await admin(`/auth/users/${u.uuid}/tokens`, { method: "POST", json: { name: "x" } });
    const r = await admin("/auth/users/tokens/introspection", { method: "POST", json: { Token: c.body.token } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      active: true,
      tenant_id: "00000000-0000-0000-0000-000000000000",
      user_uuid: u.uuid,
      scopes: expect.any(Array),
      expired_at: null,
      created_at: expect.stringMatching(TS),
    });
    expect((await admin("/auth/users/tokens/introspection", { method: "POST", json: { token: "nope" } })).body).toEqual(
      { active: false },
    );
    // a member may not introspect
    const member = caller(peer, await tokenOf(peer, admin, u, "Secret-pass-77"));
    expectError(
      await member("/auth/users/tokens/introspection", { method: "POST", json: { token: "nope" } }),
      403,
      "forbidden",
    );
  });

  it("manages own tokens with the name limits", async () => {
    const u = await createUser(admin, "sven");
    const me = caller(peer, await tokenOf(peer, admin, u, "Secret-pass-77"));
    const n256 = "n".repeat(256);
    const c = await me("/auth/users/me/tokens", { method: "POST", json: { name: n256 } });
    expect(c.status).toBe(201);
    expectError(
      await me("/auth/users/me/tokens", { method: "POST", json: { name: n256 + "n" } }),
      400,
      "invalid_request",
    );
    expectError(await me("/auth/users/me/tokens", { method: "POST", json: { name: "" } }), 400);
    expectError(
      await me("/auth/users/me/tokens", { method: "POST", json: { name: "x", expired_at: "tomorrow" } }),
      400,
    );
    const up = await me(`/auth/users/me/tokens/${c.body.id}`, { method: "PATCH", json: { name: "m".repeat(256) } });
    expect(up.status).toBe(200);
    expectError(
      await me(`/auth/users/me/tokens/${c.body.id}`, { method: "PATCH", json: { name: "m".repeat(257) } }),
      400,
    );
    const list = await me("/auth/users/me/tokens?per_page=1&page=2");
    expect(list.body.page).toEqual({ next: false, prev: true, prev_page: 1, total_page: 2, total_count: 2 });
    expect(list.body.items).toHaveLength(1);
    expect((await me(`/auth/users/me/tokens/${c.body.id}`, { method: "DELETE" })).status).toBe(204);
    // someone else's token id is not found under /me
    const other = await admin("/auth/users/me/tokens");
    expectError(await me(`/auth/users/me/tokens/${other.body.items[0].id}`, { method: "DELETE" }), 404);
  });

  it("stores API tokens only as SHA-256 digests", async () => {
    const u = await createUser(admin, "theo");
    const c = await admin(`/auth/users/${u.uuid}/tokens`, { method: "POST", json: { name: "stored" } });
    const row = await peer.svc.accounts.tokens.byId(u.uuid, c.body.id);
    expect(row!.digest).toBe(createHash("sha256").update(c.body.token).digest("hex"));
    for (const f of ["cloud.db", "cloud.db-wal"].filter((x) => fs.existsSync(path.join(peer.dataDir, x))))
      expect(fs.readFileSync(path.join(peer.dataDir, f)).includes(c.body.token), f).toBe(false);
  });
});
