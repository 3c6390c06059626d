// A deleted user (accounts) leaves every group and project, and the edges it owned lose their owner
// (org): the accounts area emits the userDeleted domain event, the org module's `on.userDeleted` acts on it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminToken, caller, json, makeEdge, makeUser, READ_ONLY, type Call } from "./helpers.js";

describe("a deleted user", () => {
  let peer: TestPeer;
  let admin: Call;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
  });
  afterAll(async () => {
    await peer?.stop();
  });

  it("leaves its groups and projects, and its edges can be given to someone else", async () => {
    const ida = await makeUser(peer, admin, "ida");
    const ned = await makeUser(peer, admin, "ned");
    const group = await json(admin("/auth/groups", { method: "POST", json: { name: "deleted-user-group" } }), 201);
    const project = await json(
      admin(`/auth/groups/${group.uuid}/projects`, { method: "POST", json: { name: "deleted-user-project" } }),
      201,
    );
    await json(
      admin(`/auth/groups/${group.uuid}/members`, {
        method: "POST",
        json: { user_uuid: ida.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    await json(
      admin(`/auth/projects/${project.uuid}/members`, {
        method: "POST",
        json: { user_uuid: ida.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    const edge = await makeEdge(admin, "ida-edge");
    await json(admin(`/auth/edges/${edge.uuid}/owner`, { method: "POST", json: { user_uuid: ida.uuid } }), 200);
    const taken = await admin(`/auth/edges/${edge.uuid}/owner`, { method: "POST", json: { user_uuid: ned.uuid } });
    expect(taken.status).toBe(409);

    await json(admin(`/auth/users/${ida.uuid}`, { method: "DELETE" }), 204);

    expect((await admin(`/auth/groups/${group.uuid}/members/${ida.uuid}`)).status).toBe(404);
    expect((await admin(`/auth/projects/${project.uuid}/members/${ida.uuid}`)).status).toBe(404);
    expect(
      await json(admin(`/auth/edges/${edge.uuid}/owner`, { method: "POST", json: { user_uuid: ned.uuid } }), 200),
    ).toEqual({ user_uuid: ned.uuid });
  });
});
