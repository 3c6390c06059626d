// Groups, sub-groups and group members: every operation's success and refusal paths.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import {
  adminToken,
  caller,
  json,
  makeUser,
  MEMBER,
  OWNER,
  READ_ONLY,
  TS,
  UUID,
  type Call,
  type TestUser,
} from "./helpers.js";

describe("groups", () => {
  let peer: TestPeer;
  let admin: Call;
  let adminUuid: string;
  let gus: TestUser;
  let hal: TestUser;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
    adminUuid = (await json(admin("/auth/users/me"), 200)).uuid;
    gus = await makeUser(peer, admin, "gus");
    hal = await makeUser(peer, admin, "hal");
  });
  afterAll(async () => {
    await peer?.stop();
  });

  const create = (name: string, parent?: string) =>
    json(admin(parent ? `/auth/groups/${parent}/groups` : "/auth/groups", { method: "POST", json: { name } }), 201);

  it("creates, gets, renames and deletes groups", async () => {
    const g = await create("alpha");
    expect(g).toEqual({
      uuid: expect.stringMatching(UUID),
      parent_group_uuid: null,
      name: "alpha",
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
    });
    expect(await json(admin(`/auth/groups/${g.uuid}`), 200)).toEqual(g);
    const dup = await admin("/auth/groups", { method: "POST", json: { name: "alpha" } });
    expect(dup).toMatchObject({
      status: 409,
      body: {
        type: "conflict",
        title: "a group with this name already exists here",
        properties: { name: "already exists" },
      },
    });
    expect((await admin("/auth/groups", { method: "POST", json: { name: "" } })).status).toBe(400);
    expect((await admin("/auth/groups", { method: "POST", json: { name: "n".repeat(256) } })).status).toBe(400);
    await create("n".repeat(255));
    expect(
      await json(admin(`/auth/groups/${g.uuid}`, { method: "PATCH", json: { name: "alpha-2" } }), 200),
    ).toMatchObject({ uuid: g.uuid, name: "alpha-2" });
    expect((await json(admin(`/auth/groups/${g.uuid}`, { method: "PATCH", json: {} }), 200)).name).toBe("alpha-2");
    const sub = await create("child", g.uuid);
    expect(sub.parent_group_uuid).toBe(g.uuid);
    const busy = await admin(`/auth/groups/${g.uuid}`, { method: "DELETE" });
    expect(busy).toMatchObject({
      status: 409,
      body: { type: "conflict", title: "the group still has sub-groups or projects; delete them first" },
    });
    await json(admin(`/auth/groups/${sub.uuid}`, { method: "DELETE" }), 204);
    await json(admin(`/auth/groups/${g.uuid}`, { method: "DELETE" }), 204);
    expect(await admin(`/auth/groups/${g.uuid}`)).toMatchObject({
      status: 404,
      body: { type: "not_found", title: "group not found" },
    });
  });

  it("lists groups, sub-groups and own groups with sort and pages", async () => {
    const top = await create("list-top");
    for (const n of ["b", "a", "c"]) await create(n, top.uuid);
    const names = async (p: string) => (await json(admin(p), 200)).items.map((g: { name: string }) => g.name);
    expect(await names(`/auth/groups/${top.uuid}/groups`)).toEqual(["a", "b", "c"]);
    expect(await names(`/auth/groups/${top.uuid}/groups?sort=name-`)).toEqual(["c", "b", "a"]);
    const page = await json(admin(`/auth/groups/${top.uuid}/groups?per_page=2&page=1`), 200);
    expect(page.page).toEqual({ next: true, prev: false, next_page: 2, total_page: 2, total_count: 3 });
    expect((await admin(`/auth/groups/${top.uuid}/groups?sort=size`)).status).toBe(400);
    expect(await names("/auth/groups?per_page=200")).toEqual(expect.arrayContaining(["list-top", "a", "b", "c"]));
    // gus joins the top group: he sees it and its sub-groups as his own.
    await json(
      admin(`/auth/groups/${top.uuid}/members`, {
        method: "POST",
        json: { user_uuid: gus.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    expect(
      (await json(gus.call("/auth/users/me/groups?sort=name"), 200)).items.map((g: { name: string }) => g.name),
    ).toEqual(["a", "b", "c", "list-top"]);
    expect((await json(hal.call("/auth/users/me/groups"), 200)).items).toEqual([]);
  });

  it(`limits nesting depth with ${"exceeded_max_groups_count"}`, async () => {
    let parent = (await create("depth-1")).uuid;
    for (let d = 2; d <= 5; d++) parent = (await create(`depth-${d}`, parent)).uuid;
    const deep = await admin(`/auth/groups/${parent}/groups`, { method: "POST", json: { name: "depth-6" } });
    expect(deep).toMatchObject({
      status: 403,
      body: { type: "exceeded_max_groups_count", title: "groups may be nested at most 5 levels deep" },
    });
  });

  it("adds, gets, updates and removes members with exact bodies", async () => {
    const g = await create("members");
    const creator = await json(admin(`/auth/groups/${g.uuid}/members/${adminUuid}`), 200);
    expect(creator).toMatchObject({
      user_uuid: adminUuid,
      name: "admin",
      is_owner: true,
      role_uuids: [],
      inherited_role_uuids: [],
    });
    const m = await json(
      admin(`/auth/groups/${g.uuid}/members`, { method: "POST", json: { user_uuid: gus.uuid, role_uuids: [MEMBER] } }),
      200,
    );
    expect(m).toEqual({
      user_uuid: gus.uuid,
      name: "gus",
      emails: [
        {
          id: expect.any(Number),
          address: "gus@example.test",
          verified: false,
          created_at: expect.stringMatching(TS),
          updated_at: expect.stringMatching(TS),
        },
      ],
      inherited_role_uuids: [],
      role_uuids: [MEMBER],
      is_owner: false,
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
    });
    const byMail = await json(
      admin(`/auth/groups/${g.uuid}/members`, {
        method: "POST",
        json: { User_Email_Address: "hal@example.test", role_uuids: [] },
      }),
      200,
    );
    expect(byMail.user_uuid).toBe(hal.uuid);
    const again = await admin(`/auth/groups/${g.uuid}/members`, {
      method: "POST",
      json: { user_uuid: gus.uuid, role_uuids: [] },
    });
    expect(again).toMatchObject({
      status: 409,
      body: { type: "conflict", title: "the user is already a member", properties: { user_uuid: "already a member" } },
    });
    const neither = await admin(`/auth/groups/${g.uuid}/members`, { method: "POST", json: { role_uuids: [] } });
    expect(neither).toMatchObject({
      status: 400,
      body: { type: "invalid_request", properties: { user_uuid: "required" } },
    });
    const nobody = await admin(`/auth/groups/${g.uuid}/members`, {
      method: "POST",
      json: { user_email_address: "nobody@example.test", role_uuids: [] },
    });
    expect(nobody).toMatchObject({
      status: 400,
      body: { type: "invalid_request", properties: { user_email_address: "no user has this address" } },
    });
    const badRole = await admin(`/auth/groups/${g.uuid}/members`, {
      method: "POST",
      json: { user_uuid: adminUuid, role_uuids: ["00000000-0000-4000-8000-000000000009"] },
    });
    expect(badRole.status).toBe(400);
    const ownerRole = await admin(`/auth/groups/${g.uuid}/members/${gus.uuid}`, {
      method: "PATCH",
      json: { role_uuids: [MEMBER, OWNER] },
    });
    expect(ownerRole).toMatchObject({
      status: 403,
      body: { type: "forbidden", title: "owner role cannot be changed." },
    });
    expect(
      (
        await json(
          admin(`/auth/groups/${g.uuid}/members/${gus.uuid}`, { method: "PATCH", json: { role_uuids: [READ_ONLY] } }),
          200,
        )
      ).role_uuids,
    ).toEqual([READ_ONLY]);
    expect(await admin(`/auth/groups/${g.uuid}/members/00000000-0000-4000-8000-000000000004`)).toMatchObject({
      status: 404,
      body: { type: "not_found", title: "member not found" },
    });
    // Lists: filters and sort by name.
    const list = async (q: string) =>
      (await json(admin(`/auth/groups/${g.uuid}/members?${q}`), 200)).items.map((x: { name: string }) => x.name);
    expect(await list("sort=name")).toEqual(["admin", "gus", "hal"]);
    expect(await list("sort=name-")).toEqual(["hal", "gus", "admin"]);
    expect(await list("is_owner=true")).toEqual(["admin"]);
    expect(await list(`user_uuid[]=${hal.uuid}&user_uuid[]=${gus.uuid}&sort=name`)).toEqual(["gus", "hal"]);
    expect((await json(admin(`/auth/groups/${g.uuid}/members?per_page=1`), 200)).page).toMatchObject({
      total_count: 3,
      total_page: 3,
      next: true,
    });
    await json(admin(`/auth/groups/${g.uuid}/members/${hal.uuid}`, { method: "DELETE" }), 204);
    expect((await admin(`/auth/groups/${g.uuid}/members/${hal.uuid}`)).status).toBe(404);
  });

  it("keeps the owner rules: unremovable owners, at least one owner, 304 when nothing changes", async () => {
    const g = await create("owners");
    await json(
      admin(`/auth/groups/${g.uuid}/members`, { method: "POST", json: { user_uuid: gus.uuid, role_uuids: [] } }),
      200,
    );
    const base = `/auth/groups/${g.uuid}/members`;
    expect(await admin(`${base}/${adminUuid}`, { method: "DELETE" })).toMatchObject({
      status: 403,
      body: { type: "forbidden", title: "unremovable owner member" },
    });
    expect(await admin(`${base}/${adminUuid}/owner`, { method: "DELETE" })).toMatchObject({
      status: 403,
      body: { type: "forbidden", title: "group must have at least one owner." },
    });
    expect((await json(admin(`${base}/${gus.uuid}/owner`, { method: "PUT" }), 200)).is_owner).toBe(true);
    expect(await admin(`${base}/${gus.uuid}/owner`, { method: "PUT" })).toMatchObject({ status: 304, body: undefined });
    await json(admin(`${base}/${adminUuid}/owner`, { method: "DELETE" }), 204);
    expect(await admin(`${base}/${adminUuid}/owner`, { method: "DELETE" })).toMatchObject({
      status: 304,
      body: undefined,
    });
    await json(admin(`${base}/${adminUuid}`, { method: "DELETE" }), 204);
    // gus, now the only owner, holds every permission in the group although his roles are empty.
    expect((await gus.call(`/auth/groups/${g.uuid}`, { method: "PATCH", json: { name: "owned-by-gus" } })).status).toBe(
      200,
    );
    expect(await gus.call(`${base}/${gus.uuid}/owner`, { method: "DELETE" })).toMatchObject({
      status: 403,
      body: { type: "forbidden", title: "group must have at least one owner." },
    });
  });

  it("shows roles inherited through parent groups", async () => {
    const top = await create("inh-top");
    const mid = await create("inh-mid", top.uuid);
    await json(
      admin(`/auth/groups/${top.uuid}/members`, {
        method: "POST",
        json: { user_uuid: gus.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    const m = await json(
      admin(`/auth/groups/${mid.uuid}/members`, {
        method: "POST",
        json: { user_uuid: gus.uuid, role_uuids: [MEMBER] },
      }),
      200,
    );
    expect(m).toMatchObject({ role_uuids: [MEMBER], inherited_role_uuids: [READ_ONLY] });
    // The creator owns the top group: in the sub-group the owner role is inherited.
    expect((await json(admin(`/auth/groups/${mid.uuid}/members/${adminUuid}`), 200)).inherited_role_uuids).toEqual([
      OWNER,
    ]);
  });

  it("refuses non-members and callers without group scopes", async () => {
    const g = await create("private");
    const denied = { status: 403, body: { type: "forbidden", title: "access denied" } };
    expect(await hal.call(`/auth/groups/${g.uuid}`)).toMatchObject(denied);
    expect(await hal.call(`/auth/groups/${g.uuid}/members`)).toMatchObject(denied);
    expect(await hal.call("/auth/groups", { method: "POST", json: { name: "hal-group" } })).toMatchObject(denied);
    await json(
      admin(`/auth/groups/${g.uuid}/members`, {
        method: "POST",
        json: { user_uuid: hal.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    expect((await hal.call(`/auth/groups/${g.uuid}/members`)).status).toBe(200);
    expect(
      await hal.call(`/auth/groups/${g.uuid}/members`, {
        method: "POST",
        json: { user_uuid: gus.uuid, role_uuids: [] },
      }),
    ).toMatchObject(denied);
  });
});
