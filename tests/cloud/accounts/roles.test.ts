import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scopeAccess } from "../../../cloud/accounts/service/access.js";
import { ROLES, SCOPES } from "../../../cloud/accounts/service/catalogue.js";
import type { TestPeer } from "../harness.js";
import {
  MEMBER,
  OWNER,
  READ_ONLY,
  SUPER,
  TS,
  caller,
  createUser,
  expectError,
  startPeerWithAdmin,
  tokenOf,
  type Call,
} from "./helpers.js";

describe("roles and scopes", () => {
  let peer: TestPeer;
  let admin: Call;
  let adminUuid: string;
  beforeAll(async () => ({ peer, admin, adminUuid } = await startPeerWithAdmin()));
  afterAll(() => peer?.stop());

  it("lists and gets roles with their scopes", async () => {
    const r = await admin("/auth/roles");
    expect(r.status).toBe(200);
    expect(r.body.items.map((x: any) => x.name)).toEqual(["super-user", "member", "read-only", "edge", "owner"]);
    expect(r.body.page).toEqual({ next: false, prev: false, total_page: 1, total_count: ROLES.length });
    const role = r.body.items[0];
    expect(Object.keys(role).sort()).toEqual(["created_at", "name", "scopes", "updated_at", "uuid"]);
    expect(role.scopes[0]).toEqual({
      uuid: expect.any(String),
      name: "all:a",
      allowed_endpoints: [{ path: "/**", method: "*" }],
      allowed_iscp_messages: expect.arrayContaining([{ type: "upstream" }]),
      denied_endpoints: [],
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
    });
    const one = await admin(`/auth/roles/${MEMBER.toUpperCase()}`);
    expect(one.status).toBe(200);
    expect(one.body.name).toBe("member");
    expectError(await admin("/auth/roles/00000000-0000-0000-0000-000000000009"), 404, "not_found");
    expectError(await admin("/auth/roles/not-a-uuid"), 400, "invalid_request");
  });

  it("filters roles and scopes by uuid[] and name[] (partial and exact) and pages them", async () => {
    const byUuid = await admin(`/auth/roles?uuid[]=${MEMBER}&uuid[]=${OWNER}`);
    expect(byUuid.body.items.map((x: any) => x.name)).toEqual(["member", "owner"]);
    expect((await admin("/auth/roles?name[]=e")).body.page.total_count).toBe(5);
    expect(
      (await admin(`/auth/roles?name[]=${encodeURIComponent('"member"')}`)).body.items.map((x: any) => x.name),
    ).toEqual(["member"]);
    expect((await admin(`/auth/roles?name[]=${encodeURIComponent('"membe"')}`)).body.items).toEqual([]);
    expectError(await admin("/auth/roles?uuid[]=nope"), 400, "invalid_request");
    const s = await admin("/auth/scopes?per_page=5&page=2");
    expect(s.body.items.map((x: any) => x.name)).toEqual(SCOPES.slice(5, 10).map((x) => x.name));
    const pages = Math.ceil(SCOPES.length / 5);
    expect(s.body.page).toEqual({
      next: true,
      prev: true,
      next_page: 3,
      prev_page: 1,
      total_page: pages,
      total_count: SCOPES.length,
    });
    const last = await admin(`/auth/scopes?per_page=5&page=${pages}`);
    expect(last.body.page.next).toBe(false);
    const beyond = await admin(`/auth/scopes?per_page=5&page=${pages + 3}`);
    expect(beyond.body.items).toEqual([]);
    expect(beyond.body.page.prev_page).toBe(pages);
    const scope = await admin(`/auth/scopes/${SCOPES[1]!.uuid}`);
    expect(scope.body.name).toBe("all:r");
    expect(scope.body.denied_endpoints).toContainEqual({ path: "/auth/users/*/tokens", method: "GET" });
    expect((await admin(`/auth/scopes?name[]=${encodeURIComponent('"users:r"')}`)).body.items).toHaveLength(1);
    expectError(await admin("/auth/scopes/00000000-0000-0000-0000-000000000009"), 404);
  });

  it("assigns (304 when already), lists and unassigns user roles", async () => {
    const u = await createUser(admin, "tom");
    const a = await admin(`/auth/users/${u.uuid}/roles/${READ_ONLY}`, { method: "PUT" });
    expect(a.status).toBe(200);
    expect(a.body.name).toBe("read-only");
    const again = await admin(`/auth/users/${u.uuid}/roles/${READ_ONLY}`, { method: "PUT" });
    expect(again.status).toBe(304);
    const list = await admin(`/auth/users/${u.uuid}/roles`);
    expect(list.body.items.map((x: any) => x.name)).toEqual(["member", "read-only"]);
    expect((await admin(`/auth/users?role_uuid[]=${READ_ONLY}`)).body.items.map((x: any) => x.name)).toEqual(["tom"]);
    expect((await admin(`/auth/users/${u.uuid}/roles/${READ_ONLY}`, { method: "DELETE" })).status).toBe(204);
    expectError(await admin(`/auth/users/${u.uuid}/roles/${READ_ONLY}`, { method: "DELETE" }), 404);
    expectError(
      await admin(`/auth/users/${u.uuid}/roles/00000000-0000-0000-0000-000000000009`, { method: "PUT" }),
      404,
    );
    expectError(await admin(`/auth/users/${u.uuid}/roles/${OWNER}`, { method: "PUT" }), 400);
    const me = caller(peer, await tokenOf(peer, admin, u, "Secret-pass-77"));
    expect((await me("/auth/users/me/roles")).body.items.map((x: any) => x.name)).toEqual(["member"]);
  });

  it("a super-user role makes is_super; the last enabled super user keeps it", async () => {
    expectError(await admin(`/auth/users/${adminUuid}/roles/${SUPER}`, { method: "DELETE" }), 403, "forbidden");
    const u = await createUser(admin, "uma");
    expect((await admin(`/auth/users/${u.uuid}/roles/${SUPER}`, { method: "PUT" })).status).toBe(200);
    expect((await admin(`/auth/users/${u.uuid}`)).body.is_super).toBe(true);
    expect((await admin("/auth/users?is_super=true")).body.items.map((x: any) => x.name)).toEqual(["admin", "uma"]);
    expect((await admin(`/auth/users/${u.uuid}/roles/${SUPER}`, { method: "DELETE" })).status).toBe(204);
    expect((await admin("/auth/users?is_super=false")).body.items.map((x: any) => x.name)).not.toContain("admin");
  });

  it("the guard decides from the caller's role scopes", async () => {
    const m = await createUser(admin, "vera");
    const member = caller(peer, await tokenOf(peer, admin, m, "Secret-pass-77"));
    expect((await member("/auth/users")).status).toBe(200);
    expect((await member("/auth/roles")).status).toBe(200);
    expectError(await member("/auth/users", { method: "POST", json: { name: "z", role_uuids: [] } }), 403, "forbidden");
    expectError(await member(`/auth/users/${adminUuid}/tokens`), 403);
    expectError(await member(`/auth/users/${adminUuid}`, { method: "DELETE" }), 403);
    const r = await createUser(admin, "walt", { role_uuids: [READ_ONLY] });
    const ro = caller(peer, await tokenOf(peer, admin, r, "Secret-pass-77"));
    expect((await ro("/auth/users")).status).toBe(200);
    expect((await ro("/auth/scopes")).status).toBe(200);
    expectError(await ro(`/auth/users/${adminUuid}/tokens`), 403);
    expectError(await ro(`/auth/users/${m.uuid}/enable`, { method: "PUT" }), 403);
    // own resources need only a signed-in user
    expect((await ro("/auth/users/me/tokens", { method: "POST", json: { name: "mine" } })).status).toBe(201);
    const nobody = await createUser(admin, "xena", { role_uuids: [] });
    const none = caller(peer, await tokenOf(peer, admin, nobody, "Secret-pass-77"));
    expectError(await none("/auth/roles"), 403);
    expect((await none("/auth/users/me")).status).toBe(200);
  });

  it("an edge principal has no own user and is judged by its scopes", async () => {
    const edgeUuid = "11111111-2222-4333-8444-555555555555";
    peer.svc.authenticators.unshift(async (ctx) =>
      ctx.get("x-test-edge")
        ? { kind: "edge", uuid: edgeUuid, isSuper: false, scopes: ["edge-self:r", "measurements:r"], via: "bearer" }
        : undefined,
    );
    const edge = caller(peer, "1", "X-Test-Edge");
    expectError(await edge("/auth/users/me"), 403, "forbidden");
    expectError(await edge("/auth/users/me/tokens"), 403, "forbidden");
    expectError(await edge("/auth/users"), 403, "forbidden");
    expect(
      await scopeAccess.allows(
        { kind: "edge", uuid: edgeUuid, isSuper: false, scopes: ["edge-self:r"], via: "bearer" },
        "GET",
        "/auth/edges/me",
      ),
    ).toBe(true);
    expect(
      await scopeAccess.allows(
        { kind: "edge", uuid: edgeUuid, isSuper: false, scopes: ["edge-self:r"], via: "bearer" },
        "GET",
        "/auth/users/me",
      ),
    ).toBe(false);
    peer.svc.authenticators.shift();
  });
});

describe("docs/roles-and-scopes.md", () => {
  const doc = fs.readFileSync("docs/roles-and-scopes.md", "utf8");
  const rows = (section: string) => {
    const part = doc.split(`## ${section}\n`)[1]!.split("\n## ")[0]!;
    return part
      .split("\n")
      .filter((l) => /^\| `/.test(l))
      .map((l) => l.split(" | ").map((c) => c.replace(/^\| /, "").replace(/ \|$/, "").trim()));
  };
  const list = (items: readonly string[]) =>
    items.length
      ? items.map((x) => (x.startsWith("upstream") || x.startsWith("downstream") ? x : `\`${x}\``)).join(", ")
      : "—";

  it("documents every scope of the catalogue exactly as it is served", () => {
    const docRows = rows("Scopes");
    expect(docRows.map((r) => r[0])).toEqual(SCOPES.map((x) => `\`${x.name}\``));
    for (const s of SCOPES) {
      const r = docRows.find((x) => x[0] === `\`${s.name}\``)!;
      expect(r[1], s.name).toBe(`\`${s.uuid}\``);
      expect(r[2], `${s.name} allowed`).toBe(list(s.allowed_endpoints.map((e) => `${e.method} ${e.path}`)));
      expect(r[3], `${s.name} denied`).toBe(list(s.denied_endpoints.map((e) => `${e.method} ${e.path}`)));
      expect(r[4], `${s.name} iSCP`).toBe(list(s.allowed_iscp_messages.map((m) => m.type)));
      expect(s.name).toMatch(/^[a-z-]+:[rwa]$/);
    }
  });

  it("documents every role with its scopes", () => {
    const docRows = rows("Roles");
    expect(docRows.map((r) => r[0])).toEqual(ROLES.map((x) => `\`${x.name}\``));
    for (const role of ROLES) {
      const r = docRows.find((x) => x[0] === `\`${role.name}\``)!;
      expect(r[1], role.name).toBe(`\`${role.uuid}\``);
      expect(r[2], role.name).toBe(list(role.scopeNames));
    }
  });
});
