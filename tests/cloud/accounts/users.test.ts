import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestPeer } from "../harness.js";
import {
  MEMBER,
  SUPER,
  TS,
  UUID,
  caller,
  createUser,
  expectError,
  startPeerWithAdmin,
  tokenOf,
  type Call,
} from "./helpers.js";

describe("users", () => {
  let peer: TestPeer;
  let admin: Call;
  let adminUuid: string;
  beforeAll(async () => ({ peer, admin, adminUuid } = await startPeerWithAdmin()));
  afterAll(() => peer?.stop());

  it("creates a user with a temporary password and the exact User shape", async () => {
    const r = await admin("/auth/users", {
      method: "POST",
      json: {
        Name: "alice",
        NickName: "Alice A.",
        description: "first",
        ROLE_UUIDS: [MEMBER],
        email: "alice@example.com",
      },
    });
    expect(r.status).toBe(201);
    const u = r.body;
    expect(Object.keys(u).sort()).toEqual(
      [
        "uuid",
        "name",
        "nickname",
        "description",
        "disabled",
        "is_super",
        "emails",
        "password",
        "roles",
        "last_sign_in_at",
        "created_at",
        "updated_at",
      ].sort(),
    );
    expect(u).toMatchObject({
      name: "alice",
      nickname: "Alice A.",
      description: "first",
      disabled: false,
      is_super: false,
      roles: [MEMBER],
      last_sign_in_at: null,
    });
    expect(u.uuid).toMatch(UUID);
    expect(u.created_at).toMatch(TS);
    expect(u.emails).toEqual([
      {
        id: expect.any(Number),
        address: "alice@example.com",
        verified: false,
        created_at: expect.stringMatching(TS),
        updated_at: expect.stringMatching(TS),
      },
    ]);
    expect(u.password).toMatchObject({ attempt_count: 0, is_temporary: true, last_attempt_at: null });
    expect(u.password.temporary_password).toMatch(/^.{20}$/);
    expect(u.password.expired_at).toMatch(TS);
    const got = await admin(`/auth/users/${u.uuid}`);
    expect(got.status).toBe(200);
    expect(got.body.password.temporary_password).toBeUndefined();
    expect(JSON.stringify(got.body)).not.toContain(u.password.temporary_password);
  });

  it("refuses a taken name with 409 and properties, and unknown/owner roles with 400", async () => {
    await createUser(admin, "bob");
    const dup = await admin("/auth/users", { method: "POST", json: { name: "BOB", role_uuids: [] } });
    expectError(dup, 409, "conflict");
    expect(dup.body.properties).toEqual({ name: "already exist" });
    const unknown = await admin("/auth/users", {
      method: "POST",
      json: { name: "x1", role_uuids: ["00000000-0000-0000-0000-000000000001"] },
    });
    expectError(unknown, 400, "invalid_request");
    expect(unknown.body.properties.role_uuids).toBeDefined();
    const owner = await admin("/auth/users", {
      method: "POST",
      json: { name: "x2", role_uuids: ["bd8058f4-a370-49a4-9e8a-8326a07872b7"] },
    });
    expectError(owner, 400);
  });

  it("gets, updates, enables and disables a user", async () => {
    const u = await createUser(admin, "carol");
    const up = await admin(`/auth/users/${u.uuid}`, { method: "PATCH", json: { nickname: "Caz", DESCRIPTION: "d" } });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ name: "carol", nickname: "Caz", description: "d" });
    const clash = await admin(`/auth/users/${u.uuid}`, { method: "PATCH", json: { name: "admin" } });
    expectError(clash, 409, "conflict");
    const dis = await admin(`/auth/users/${u.uuid}/disable`, { method: "PUT" });
    expect(dis.status).toBe(200);
    expect(dis.body.disabled).toBe(true);
    const en = await admin(`/auth/users/${u.uuid}/enable`, { method: "PUT" });
    expect(en.body.disabled).toBe(false);
  });

  it("refuses to delete or disable oneself and the last enabled super user", async () => {
    expectError(await admin(`/auth/users/${adminUuid}`, { method: "DELETE" }), 403, "forbidden");
    expectError(await admin(`/auth/users/${adminUuid}/disable`, { method: "PUT" }), 403, "forbidden");
    // A second super user may not remove the first while it is the only other one... until both exist.
    const su = await createUser(admin, "root2", { role_uuids: [SUPER] });
    const suToken = await tokenOf(peer, admin, su);
    const su2 = caller(peer, suToken);
    expect((await su2(`/auth/users/${adminUuid}/disable`, { method: "PUT" })).status).toBe(200);
    // now root2 is the last enabled super user: admin (disabled) cannot be the one deleting, and root2 cannot delete itself
    expectError(await su2(`/auth/users/${su.uuid}`, { method: "DELETE" }), 403);
    expect((await su2(`/auth/users/${adminUuid}/enable`, { method: "PUT" })).status).toBe(200);
    const deleted: string[] = [];
    peer.svc.accounts.onUserDeleted((uuid) => void deleted.push(uuid));
    expect((await admin(`/auth/users/${su.uuid}`, { method: "DELETE" })).status).toBe(204);
    expect(deleted).toEqual([su.uuid]);
    expectError(await admin(`/auth/users/${su.uuid}`), 404, "not_found");
    expectError(await admin(`/auth/users/${su.uuid}`, { method: "DELETE" }), 404);
  });

  it("answers getMe and updateMe for the signed-in user", async () => {
    const me = await admin("/auth/users/me");
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ name: "admin", is_super: true, roles: [SUPER] });
    const up = await admin("/auth/users/me", { method: "PATCH", json: { nickname: "Boss" } });
    expect(up.body.nickname).toBe("Boss");
  });

  it("takes UUIDs in any letter case (paths, bodies, filters)", async () => {
    const r = await admin("/auth/users", {
      method: "POST",
      json: { name: "casey", role_uuids: [MEMBER.toUpperCase()] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.roles).toEqual([MEMBER]);
    const upper = r.body.uuid.toUpperCase();
    const got = await admin(`/auth/users/${upper}`);
    expect(got.status).toBe(200);
    expect(got.body.uuid).toBe(r.body.uuid);
    expect((await admin(`/auth/users?uuid[]=${upper}`)).body.items.map((x: any) => x.uuid)).toEqual([r.body.uuid]);
    expect((await admin(`/auth/users?role_uuid[]=${MEMBER.toUpperCase()}&name[]=casey`)).body.page.total_count).toBe(1);
    expect((await admin(`/auth/users/${upper}/roles`)).body.items.map((x: any) => x.uuid)).toEqual([MEMBER]);
    expect((await admin(`/auth/users/${upper}`, { method: "DELETE" })).status).toBe(204);
  });
});
