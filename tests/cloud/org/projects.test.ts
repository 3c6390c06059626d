// Projects, project members and project edges: every operation's success and refusal paths.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import {
  adminToken,
  caller,
  json,
  makeEdge,
  makeUser,
  MEMBER,
  OWNER,
  READ_ONLY,
  SUPER,
  TS,
  UUID,
  type Call,
  type TestUser,
} from "./helpers.js";

const DENIED = { status: 403, body: { type: "forbidden", title: "access denied" } };

describe("projects", () => {
  let peer: TestPeer;
  let admin: Call;
  let adminUuid: string;
  let group: string;
  let pam: TestUser;
  let quinn: TestUser;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
    adminUuid = (await json(admin("/auth/users/me"), 200)).uuid;
    pam = await makeUser(peer, admin, "pam");
    quinn = await makeUser(peer, admin, "quinn");
    group = (await json(admin("/auth/groups", { method: "POST", json: { name: "projects-home" } }), 201)).uuid;
  });
  afterAll(async () => {
    await peer?.stop();
  });
  const create = (name: string, g = group) =>
    json(admin(`/auth/groups/${g}/projects`, { method: "POST", json: { name } }), 201);

  it("creates, gets, renames and lists projects", async () => {
    const p = await create("apollo");
    expect(p).toEqual({
      uuid: expect.stringMatching(UUID),
      parent_group_uuid: group,
      name: "apollo",
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
    });
    expect(await json(admin(`/auth/projects/${p.uuid}`), 200)).toEqual(p);
    const dup = await admin(`/auth/groups/${group}/projects`, { method: "POST", json: { name: "apollo" } });
    expect(dup).toMatchObject({
      status: 409,
      body: {
        type: "conflict",
        title: "a project with this name already exists here",
        properties: { name: "already exists" },
      },
    });
    expect(
      (await admin(`/auth/groups/${group}/projects`, { method: "POST", json: { name: "n".repeat(256) } })).status,
    ).toBe(400);
    expect((await admin(`/auth/projects/${p.uuid}`, { method: "PATCH", json: {} })).status).toBe(400);
    expect(
      await json(admin(`/auth/projects/${p.uuid}`, { method: "PATCH", json: { name: "apollo-2" } }), 200),
    ).toMatchObject({ name: "apollo-2" });
    const b = await create("borealis");
    const names = async (path: string) => (await json(admin(path), 200)).items.map((x: { name: string }) => x.name);
    expect(await names(`/auth/groups/${group}/projects`)).toEqual(["apollo-2", "borealis"]);
    expect(await names(`/auth/groups/${group}/projects?sort=name-`)).toEqual(["borealis", "apollo-2"]);
    expect(await names("/auth/projects?sort=name")).toEqual(["apollo-2", "borealis"]);
    expect(await names(`/auth/projects?since_created_at=${encodeURIComponent("2000-01-01T00:00:00Z")}`)).toHaveLength(
      2,
    );
    expect(await names(`/auth/projects?since_created_at=${encodeURIComponent(b.created_at)}`)).toEqual([]);
    expect((await admin("/auth/projects?since_created_at=yesterday")).status).toBe(400);
    expect(
      await admin(`/auth/groups/00000000-0000-4000-8000-000000000005/projects`, {
        method: "POST",
        json: { name: "x" },
      }),
    ).toMatchObject({ status: 404, body: { type: "not_found", title: "group not found" } });
  });

  it("refuses a project beyond the per-group limit with exceeded_max_projects_count_per_group", async () => {
    const { ProjectRepo } = await import("../../../cloud/org/repo/groups.js");
    const { MAX_PROJECTS_PER_GROUP } = await import("../../../cloud/org/service/limits.js");
    const full = (await json(admin("/auth/groups", { method: "POST", json: { name: "full" } }), 201)).uuid;
    const at = new Date().toISOString();
    await peer.svc.db.transaction(async (tx) => {
      const repo = new ProjectRepo(tx);
      for (let i = 0; i < MAX_PROJECTS_PER_GROUP; i++)
        await repo.insert({
          uuid: crypto.randomUUID(),
          group_uuid: full,
          name: `p${i}`,
          created_at: at,
          updated_at: at,
        });
    });
    const r = await admin(`/auth/groups/${full}/projects`, { method: "POST", json: { name: "one-too-many" } });
    expect(r).toMatchObject({
      status: 403,
      body: {
        type: "exceeded_max_projects_count_per_group",
        title: `a group may hold at most ${MAX_PROJECTS_PER_GROUP} projects`,
      },
    });
  });

  it("lists own projects: direct membership and membership of a parent group", async () => {
    const sub = (await json(admin(`/auth/groups/${group}/groups`, { method: "POST", json: { name: "own-sub" } }), 201))
      .uuid;
    const direct = await create("own-direct");
    const viaGroup = await create("own-via-group", sub);
    await json(
      admin(`/auth/projects/${direct.uuid}/members`, {
        method: "POST",
        json: { user_uuid: pam.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    await json(
      admin(`/auth/groups/${sub}/members`, { method: "POST", json: { user_uuid: pam.uuid, role_uuids: [READ_ONLY] } }),
      200,
    );
    const mine = (await json(pam.call("/auth/users/me/projects?sort=name"), 200)).items.map(
      (x: { uuid: string }) => x.uuid,
    );
    expect(mine).toEqual([direct.uuid, viaGroup.uuid]);
    expect((await json(quinn.call("/auth/users/me/projects"), 200)).items).toEqual([]);
  });

  it("deletes a project only as its owner", async () => {
    const p = await create("doomed");
    // A member whose role allows DELETE (super-user role inside the project) is still no owner.
    await json(
      admin(`/auth/projects/${p.uuid}/members`, {
        method: "POST",
        json: { user_uuid: quinn.uuid, role_uuids: [SUPER] },
      }),
      200,
    );
    const refused = await quinn.call(`/auth/projects/${p.uuid}`, { method: "DELETE" });
    expect(refused).toEqual({
      status: 403,
      body: { type: "forbidden", title: "You cannot delete a project. Because you are not a project owner." },
      headers: expect.anything(),
    });
    await json(admin(`/auth/projects/${p.uuid}/members/${quinn.uuid}/owner`, { method: "PUT" }), 200);
    expect(await quinn.call(`/auth/projects/${p.uuid}`, { method: "DELETE" })).toMatchObject({
      status: 204,
      body: undefined,
    });
    expect(await admin(`/auth/projects/${p.uuid}`)).toMatchObject({
      status: 404,
      body: { type: "not_found", title: "project not found" },
    });
    // Gone for its former members too (the guard no longer finds them in it).
    expect(await quinn.call(`/auth/projects/${p.uuid}`)).toMatchObject(DENIED);
  });

  it("manages project members with the owner rules and inherited roles", async () => {
    const p = await create("crew");
    const base = `/auth/projects/${p.uuid}/members`;
    const m = await json(admin(base, { method: "POST", json: { user_uuid: pam.uuid, role_uuids: [MEMBER] } }), 200);
    expect(m).toMatchObject({
      user_uuid: pam.uuid,
      name: "pam",
      role_uuids: [MEMBER],
      inherited_role_uuids: [],
      is_owner: false,
      emails: [expect.objectContaining({ address: "pam@example.test" })],
    });
    expect((await admin(base, { method: "POST", json: { user_uuid: pam.uuid, role_uuids: [] } })).status).toBe(409);
    expect(await admin(base, { method: "POST", json: { user_uuid: quinn.uuid, role_uuids: [OWNER] } })).toMatchObject({
      status: 403,
      body: { type: "forbidden", title: "owner role cannot be changed." },
    });
    expect(
      (await json(admin(`${base}/${pam.uuid}`, { method: "PATCH", json: { role_uuids: [READ_ONLY, MEMBER] } }), 200))
        .role_uuids,
    ).toEqual([READ_ONLY, MEMBER]);
    expect(await json(admin(`${base}/${pam.uuid}`), 200)).toMatchObject({ role_uuids: [READ_ONLY, MEMBER] });
    // The group creator (admin) owns the group: in the project the owner role is inherited.
    expect(await json(admin(`${base}/${adminUuid}`), 200)).toMatchObject({
      is_owner: true,
      inherited_role_uuids: [OWNER],
    });
    expect(await admin(`${base}/${adminUuid}`, { method: "DELETE" })).toMatchObject({
      status: 403,
      body: { type: "forbidden", title: "unremovable owner member" },
    });
    expect(await admin(`${base}/${adminUuid}/owner`, { method: "DELETE" })).toMatchObject({
      status: 403,
      body: { type: "forbidden", title: "project must have at least one owner." },
    });
    await json(admin(`${base}/${pam.uuid}/owner`, { method: "PUT" }), 200);
    expect((await admin(`${base}/${pam.uuid}/owner`, { method: "PUT" })).status).toBe(304);
    await json(admin(`${base}/${adminUuid}/owner`, { method: "DELETE" }), 204);
    expect((await admin(`${base}/${quinn.uuid}/owner`, { method: "DELETE" })).status).toBe(404);
    const owners = (await json(admin(`${base}?is_owner=true`), 200)).items.map(
      (x: { user_uuid: string }) => x.user_uuid,
    );
    expect(owners).toEqual([pam.uuid]);
    await json(admin(`${base}/${adminUuid}`, { method: "DELETE" }), 204);
    expect(await admin(`${base}/${adminUuid}`)).toMatchObject({
      status: 404,
      body: { type: "not_found", title: "member not found" },
    });
    // pam (owner, roles aside) manages her project; quinn, a stranger, cannot read its members.
    expect(
      (await pam.call(base, { method: "POST", json: { user_uuid: quinn.uuid, role_uuids: [READ_ONLY] } })).status,
    ).toBe(200);
    const other = await create("other");
    expect(await pam.call(`/auth/projects/${other.uuid}/members`)).toMatchObject(DENIED);
    expect((await quinn.call(base)).status).toBe(200);
    expect(await quinn.call(`${base}/${pam.uuid}`, { method: "PATCH", json: { role_uuids: [] } })).toMatchObject(
      DENIED,
    );
  });

  it("adds, lists, renames and removes project edges", async () => {
    const p = await create("fleet");
    const e1 = await makeEdge(admin, "fleet-1");
    const e2 = await makeEdge(admin, "fleet-2");
    const base = `/auth/projects/${p.uuid}/edges`;
    const pe = await json(admin(base, { method: "POST", json: { edge_name: "fleet-1", nickname: "one" } }), 200);
    expect(pe).toEqual({
      edge_uuid: e1.uuid,
      name: "fleet-1",
      nickname: "one",
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
    });
    expect(await admin(base, { method: "POST", json: { edge_name: "fleet-1", nickname: "uno" } })).toMatchObject({
      status: 409,
      body: { type: "conflict_project_edge_uuid", title: "the edge is already in this project" },
    });
    expect(await admin(base, { method: "POST", json: { edge_name: "fleet-2", nickname: "one" } })).toMatchObject({
      status: 409,
      body: { type: "conflict_project_edge_nickname", title: "another edge of this project has this nickname" },
    });
    expect(await admin(base, { method: "POST", json: { edge_name: "no-such-edge" } })).toMatchObject({
      status: 400,
      body: { type: "invalid_request", properties: { edge_name: "no such edge" } },
    });
    const two = await json(admin(base, { method: "POST", json: { edge_name: "fleet-2" } }), 200);
    expect(two.nickname).toBe("fleet-2");
    const nicks = async (q = "") =>
      (await json(admin(`${base}${q}`), 200)).items.map((x: { nickname: string }) => x.nickname);
    expect(await nicks()).toEqual(["fleet-2", "one"]);
    expect(await nicks("?sort=nickname-")).toEqual(["one", "fleet-2"]);
    expect(await nicks(`?edge_uuid[]=${e2.uuid}`)).toEqual(["fleet-2"]);
    expect(await json(admin(`${base}/${e1.uuid}`), 200)).toEqual(pe);
    expect(
      (await json(admin(`${base}/${e1.uuid}`, { method: "PATCH", json: { nickname: "first" } }), 200)).nickname,
    ).toBe("first");
    expect(await admin(`${base}/${e1.uuid}`, { method: "PATCH", json: { nickname: "first" } })).toMatchObject({
      status: 304,
      body: undefined,
    });
    expect((await admin(`${base}/${e1.uuid}`, { method: "PATCH", json: { nickname: "fleet-2" } })).body.type).toBe(
      "conflict_project_edge_nickname",
    );
    await json(admin(`${base}/${e1.uuid}`, { method: "DELETE" }), 204);
    expect(await admin(`${base}/${e1.uuid}`)).toMatchObject({
      status: 404,
      body: { type: "not_found", title: "the edge is not in this project" },
    });
    // Deleting an edge removes it from its projects.
    await json(admin(`/auth/edges/${e2.uuid}`, { method: "DELETE" }), 204);
    expect(await nicks()).toEqual([]);
  });
});
