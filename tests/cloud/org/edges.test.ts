// Edges: every operation's success and refusal paths, client secrets, and an edge as an OAuth2
// client (client_credentials with its UUID and a secret, then GET /api/auth/edges/me).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import {
  adminToken,
  bearer,
  caller,
  edgeToken,
  json,
  makeEdge,
  makeUser,
  READ_ONLY,
  TS,
  UUID,
  type Call,
  type TestUser,
} from "./helpers.js";

const NOT_FOUND = { type: "not_found", title: "edge not found" };
const DENIED = { type: "forbidden", title: "access denied" };

describe("edges", () => {
  let peer: TestPeer;
  let admin: Call;
  let ann: TestUser;
  let reader: TestUser;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
    ann = await makeUser(peer, admin, "ann");
    reader = await makeUser(peer, admin, "reader", [READ_ONLY]);
  });
  afterAll(async () => {
    await peer?.stop();
  });

  it("creates an edge without owner, with its first client secret shown once", async () => {
    const e = await json(
      admin("/auth/edges", { method: "POST", json: { Name: "edge-1", nickname: "First", description: "d" } }),
      201,
    );
    expect(e).toEqual({
      uuid: expect.stringMatching(UUID),
      name: "edge-1",
      nickname: "First",
      description: "d",
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      secrets: [
        {
          id: expect.any(Number),
          name: "default",
          secret: "",
          last_used_at: null,
          created_at: expect.stringMatching(TS),
        },
      ],
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
    });
    const got = await json(admin(`/auth/edges/${e.uuid}`), 200);
    expect(got.client_secret).toBeUndefined();
    expect(got.owner).toBeUndefined();
  });

  it("refuses an ordinary member another's edge: no owner change, no new secret, no edits (own edges only)", async () => {
    const mo = await makeUser(peer, admin, "mo");
    const theirs = await makeEdge(admin, "not-mos");
    for (const [path, method, body] of [
      [`/auth/edges/${theirs.uuid}/owner`, "POST", { user_uuid: mo.uuid }],
      [`/auth/edges/${theirs.uuid}/owner`, "DELETE", undefined],
      [`/auth/edges/${theirs.uuid}/secrets`, "POST", { name: "mine now" }],
      [`/auth/edges/${theirs.uuid}`, "PATCH", { nickname: "taken" }],
      [`/auth/edges/${theirs.uuid}`, "DELETE", undefined],
      ["/auth/edges", "POST", { name: "unowned-by-mo" }],
    ] as const) {
      const r = await mo.call(path, { method, ...(body ? { json: body } : {}) });
      expect([path, method, r.status, r.body]).toEqual([path, method, 403, DENIED]);
    }
    expect((await json(admin(`/auth/edges/${theirs.uuid}`), 200)).owner).toBeUndefined();
    await json(mo.call("/auth/users/me/edges", { method: "POST", json: { name: "mos-own" } }), 201);
  });

  it("validates names and refuses duplicates", async () => {
    const bad = await admin("/auth/edges", { method: "POST", json: { name: "bad name!" } });
    expect(bad.status).toBe(400);
    expect(bad.body.type).toBe("invalid_request");
    expect(Object.keys(bad.body.properties)).toEqual(["name"]);
    expect((await admin("/auth/edges", { method: "POST", json: { name: "x".repeat(256) } })).status).toBe(400);
    expect((await admin("/auth/edges", { method: "POST", json: { name: "" } })).status).toBe(400);
    expect(
      (await admin("/auth/edges", { method: "POST", json: { name: "n", nickname: "x".repeat(512) } })).status,
    ).toBe(400);
    await json(
      admin("/auth/edges", { method: "POST", json: { name: "x".repeat(255), nickname: "x".repeat(511) } }),
      201,
    );
    const dup = await admin("/auth/edges", { method: "POST", json: { name: "edge-1" } });
    expect(dup).toMatchObject({
      status: 409,
      body: {
        type: "conflict",
        title: "an edge with this name already exists",
        properties: { name: "already exists" },
      },
    });
  });

  it("gets, updates and deletes an edge; 404 for unknown edges; 400 for a non-UUID", async () => {
    const e = await makeEdge(admin, "edge-upd");
    const u = await json(admin(`/auth/edges/${e.uuid}`, { method: "PATCH", json: { nickname: "Nick" } }), 200);
    expect(u).toMatchObject({ name: "edge-upd", nickname: "Nick", description: "" });
    expect((await admin(`/auth/edges/${e.uuid}`, { method: "PATCH", json: { name: "edge-1" } })).status).toBe(409);
    expect(await admin(`/auth/edges/${e.uuid}`, { method: "DELETE" })).toMatchObject({ status: 204, body: undefined });
    expect(await admin(`/auth/edges/${e.uuid}`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await admin(`/auth/edges/${e.uuid}`, { method: "DELETE" })).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await admin("/auth/edges/not-a-uuid")).status).toBe(400);
  });

  it("assigns and removes an owner", async () => {
    const e = await makeEdge(admin, "edge-own");
    expect(
      await json(admin(`/auth/edges/${e.uuid}/owner`, { method: "POST", json: { user_uuid: ann.uuid } }), 200),
    ).toEqual({ user_uuid: ann.uuid });
    expect((await json(admin(`/auth/edges/${e.uuid}`), 200)).owner).toEqual({ user_uuid: ann.uuid });
    // Same owner again is fine; another owner conflicts; an unknown user is a bad request.
    await json(admin(`/auth/edges/${e.uuid}/owner`, { method: "POST", json: { user_uuid: ann.uuid } }), 200);
    const other = await admin(`/auth/edges/${e.uuid}/owner`, { method: "POST", json: { user_uuid: reader.uuid } });
    expect(other).toMatchObject({ status: 409, body: { type: "conflict", title: "the edge already has an owner" } });
    const nobody = await admin(`/auth/edges/${e.uuid}/owner`, {
      method: "POST",
      json: { user_uuid: "00000000-0000-4000-8000-000000000001" },
    });
    expect(nobody).toMatchObject({
      status: 400,
      body: { type: "invalid_request", properties: { user_uuid: "no such user" } },
    });
    await json(admin(`/auth/edges/${e.uuid}/owner`, { method: "DELETE" }), 204);
    expect((await json(admin(`/auth/edges/${e.uuid}`), 200)).owner).toBeUndefined();
  });

  it("lists with filters, sort and pages", async () => {
    const owned = await json(
      admin(`/auth/users/${ann.uuid}/edges`, { method: "POST", json: { name: "list-b", nickname: "Bee" } }),
      201,
    );
    await json(admin("/auth/edges", { method: "POST", json: { name: "list-a", nickname: "Ay" } }), 201);
    const names = async (q: string) =>
      (await json(admin(`/auth/edges?${q}`), 200)).items.map((e: { name: string }) => e.name);
    expect(await names("name[]=list-")).toEqual(["list-a", "list-b"]);
    expect(await names('name[]="list-a"')).toEqual(["list-a"]);
    expect(await names("name[]=list-&sort=name-")).toEqual(["list-b", "list-a"]);
    expect(await names("nickname[]=Bee")).toEqual(["list-b"]);
    expect(await names(`owner_uuid[]=${ann.uuid}`)).toEqual(["list-b"]);
    expect(await names(`uuid[]=${owned.uuid}`)).toEqual(["list-b"]);
    expect(await names("name[]=list-&has_owner=false")).toEqual(["list-a"]);
    expect(await names("name[]=list-&has_owner=true")).toEqual(["list-b"]);
    const page = await json(admin("/auth/edges?name[]=list-&per_page=1&page=2"), 200);
    expect(page.items.map((e: { name: string }) => e.name)).toEqual(["list-b"]);
    expect(page.page).toEqual({ next: false, prev: true, prev_page: 1, total_page: 2, total_count: 2 });
    expect((await admin("/auth/edges?has_owner=maybe")).status).toBe(400);
    expect((await admin("/auth/edges?per_page=201")).status).toBe(400);
  });

  it("manages a user's edges", async () => {
    const e = await json(admin(`/auth/users/${ann.uuid}/edges`, { method: "POST", json: { name: "users-edge" } }), 201);
    expect(e.owner).toEqual({ user_uuid: ann.uuid });
    expect(e.client_secret).toEqual(expect.any(String));
    expect(
      (await json(admin(`/auth/users/${ann.uuid}/edges?per_page=200`), 200)).items.map((x: { uuid: string }) => x.uuid),
    ).toContain(e.uuid);
    expect((await json(admin(`/auth/users/${ann.uuid}/edges/${e.uuid}`), 200)).name).toBe("users-edge");
    expect(
      await json(
        admin(`/auth/users/${ann.uuid}/edges/${e.uuid}`, { method: "PATCH", json: { description: "dd" } }),
        200,
      ),
    ).toMatchObject({ description: "dd" });
    expect(await admin(`/auth/users/${reader.uuid}/edges/${e.uuid}`)).toMatchObject({ status: 404, body: NOT_FOUND });
    const ghost = await admin("/auth/users/00000000-0000-4000-8000-000000000002/edges", {
      method: "POST",
      json: { name: "ghost" },
    });
    expect(ghost).toMatchObject({ status: 404, body: { type: "not_found", title: "user not found" } });
    await json(admin(`/auth/users/${ann.uuid}/edges/${e.uuid}`, { method: "DELETE" }), 204);
    expect((await admin(`/auth/edges/${e.uuid}`)).status).toBe(404);
  });

  it("manages own edges; others' edges are not found", async () => {
    const mine = await json(ann.call("/auth/users/me/edges", { method: "POST", json: { name: "ann-edge" } }), 201);
    expect(mine.owner).toEqual({ user_uuid: ann.uuid });
    const fixed = "0b7e4f3c-6a51-4c55-9f55-0a8f3d1c2b11";
    const withUuid = await json(
      ann.call(`/auth/users/me/edges/${fixed.toUpperCase()}`, { method: "PUT", json: { name: "ann-fixed" } }),
      201,
    );
    expect(withUuid).toMatchObject({
      uuid: fixed,
      name: "ann-fixed",
      owner: { user_uuid: ann.uuid },
      client_secret: expect.any(String),
    });
    const again = await ann.call(`/auth/users/me/edges/${fixed}`, { method: "PUT", json: { name: "ann-fixed-2" } });
    expect(again).toMatchObject({
      status: 409,
      body: {
        type: "conflict",
        title: "an edge with this UUID already exists",
        properties: { uuid: "already exists" },
      },
    });
    // A UUID is also taken when a user or an OAuth2 client has it (subjects and client_ids share it).
    const takenByUser = await ann.call(`/auth/users/me/edges/${reader.uuid}`, {
      method: "PUT",
      json: { name: "ann-as-reader" },
    });
    expect(takenByUser).toMatchObject({
      status: 409,
      body: { type: "conflict", title: "this UUID is already in use", properties: { uuid: "already exists" } },
    });
    const client = await json(
      ann.call("/auth/users/me/clients", {
        method: "POST",
        json: { name: "c", grant_type: "client_credentials", token_endpoint_auth_method: "client_secret_post" },
      }),
      201,
    );
    const takenByClient = await ann.call(`/auth/users/me/edges/${client.client_id}`, {
      method: "PUT",
      json: { name: "ann-as-client" },
    });
    expect(takenByClient).toMatchObject({
      status: 409,
      body: { type: "conflict", title: "this UUID is already in use" },
    });
    const list = await json(ann.call("/auth/users/me/edges"), 200);
    expect(list.items.map((e: { name: string }) => e.name)).toEqual(["ann-edge", "ann-fixed", "list-b"]);
    expect(
      await json(ann.call(`/auth/users/me/edges/${mine.uuid}`, { method: "PATCH", json: { nickname: "mine" } }), 200),
    ).toMatchObject({ nickname: "mine" });
    expect((await json(ann.call(`/auth/users/me/edges/${mine.uuid}`), 200)).nickname).toBe("mine");
    const foreign = await makeEdge(admin, "not-anns");
    expect(await ann.call(`/auth/users/me/edges/${foreign.uuid}`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await ann.call(`/auth/users/me/edges/${foreign.uuid}`, { method: "DELETE" })).toMatchObject({
      status: 404,
      body: NOT_FOUND,
    });
    await json(ann.call(`/auth/users/me/edges/${fixed}`, { method: "DELETE" }), 204);
    expect((await ann.call(`/auth/users/me/edges/${fixed}`)).status).toBe(404);
  });

  it("refuses callers whose scopes do not cover edges, and anonymous callers", async () => {
    expect(await reader.call("/auth/edges", { method: "POST", json: { name: "nope" } })).toMatchObject({
      status: 403,
      body: DENIED,
    });
    expect((await reader.call("/auth/edges")).status).toBe(200);
    const anon = await caller(peer)("/auth/edges");
    expect(anon.status).toBe(401);
    expect(anon.body.type).toBe("unauthorized");
  });

  it("creates, lists and deletes client secrets; each works at the token endpoint until deleted", async () => {
    const e = await makeEdge(admin, "secrets-edge");
    const s = await json(admin(`/auth/edges/${e.uuid}/secrets`, { method: "POST", json: { name: "second" } }), 201);
    expect(s).toEqual({
      id: expect.any(Number),
      name: "second",
      secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      last_used_at: null,
      created_at: expect.stringMatching(TS),
    });
    expect((await admin(`/auth/edges/${e.uuid}/secrets`, { method: "POST", json: { name: "" } })).status).toBe(400);
    expect(
      (await admin(`/auth/edges/${e.uuid}/secrets`, { method: "POST", json: { name: "n".repeat(512) } })).status,
    ).toBe(400);
    await json(admin(`/auth/edges/${e.uuid}/secrets`, { method: "POST", json: { name: "n".repeat(511) } }), 201);
    expect((await edgeToken(peer, { uuid: e.uuid, secret: s.secret })).status).toBe(200);
    expect((await edgeToken(peer, e)).status).toBe(200);
    const listed = await json(admin(`/auth/edges/${e.uuid}/secrets`), 200);
    expect(listed.items.map((x: { name: string }) => x.name)).toEqual(["default", "second", "n".repeat(511)]);
    expect(listed.items[1]).toMatchObject({ secret: "", last_used_at: expect.stringMatching(TS) });
    await json(admin(`/auth/edges/${e.uuid}/secrets/${s.id}`, { method: "DELETE" }), 204);
    expect(await admin(`/auth/edges/${e.uuid}/secrets/${s.id}`, { method: "DELETE" })).toMatchObject({
      status: 404,
      body: { type: "not_found", title: "client secret not found" },
    });
    const refused = await edgeToken(peer, { uuid: e.uuid, secret: s.secret });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe("invalid_client");
    // Own edges: the owner manages their secrets, nobody else through /users/me.
    const mine = await makeEdge(ann.call, "ann-secrets", "/auth/users/me/edges");
    const own = await json(
      ann.call(`/auth/users/me/edges/${mine.uuid}/secrets`, { method: "POST", json: { name: "own" } }),
      201,
    );
    expect((await json(ann.call(`/auth/users/me/edges/${mine.uuid}/secrets`), 200)).items).toHaveLength(2);
    expect(
      (await reader.call(`/auth/users/me/edges/${mine.uuid}/secrets`, { method: "POST", json: { name: "x" } })).status,
    ).toBe(404);
    await json(ann.call(`/auth/users/me/edges/${mine.uuid}/secrets/${own.id}`, { method: "DELETE" }), 204);
  });

  it("an edge gets a token by client_credentials and reads itself at GET /api/auth/edges/me", async () => {
    const e = await makeEdge(admin, "self-edge");
    const t = await edgeToken(peer, e);
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({
      token_type: "bearer",
      expires_in: expect.any(Number),
      scope: "edge-self:r measurements:r measurements:w iscp:r iscp:w",
    });
    expect(t.body.refresh_token).toBeUndefined();
    const claims = JSON.parse(Buffer.from(t.body.access_token.split(".")[1], "base64url").toString());
    expect(claims).toMatchObject({ sub: e.uuid, client_id: e.uuid });
    const edge = bearer(peer, t.body.access_token);
    const me = await json(edge("/auth/edges/me"), 200);
    expect(me).toMatchObject({ uuid: e.uuid, name: "self-edge" });
    expect(me.client_secret).toBeUndefined();
    // A user is not an edge; an edge has no own edges; an edge's scopes do not reach /auth/edges.
    expect(await ann.call("/auth/edges/me")).toMatchObject({
      status: 404,
      body: { type: "not_found", title: "the caller is not an edge" },
    });
    expect(await edge("/auth/users/me/edges")).toMatchObject({
      status: 403,
      body: { type: "forbidden", title: "only a user may call this operation" },
    });
    expect(await edge("/auth/edges")).toMatchObject({ status: 403, body: DENIED });
    // Wrong secret, unknown edge.
    expect((await edgeToken(peer, { uuid: e.uuid, secret: "wrong" })).body.error).toBe("invalid_client");
    expect((await edgeToken(peer, { uuid: "00000000-0000-4000-8000-000000000003", secret: e.secret })).body.error).toBe(
      "invalid_client",
    );
    // A deleted edge's token no longer finds it.
    await json(admin(`/auth/edges/${e.uuid}`, { method: "DELETE" }), 204);
    expect(await edge("/auth/edges/me")).toMatchObject({ status: 404, body: NOT_FOUND });
  });
});
