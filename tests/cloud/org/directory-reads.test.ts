// What reading the directory shows (docs/access-control.md, "Directory reads"): users:r gives users, not their
// OAuth2 clients (clients:r does, by either path); edges:r gives edges and their secrets' names, never any part of
// a secret.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminToken, caller, makeEdge, makeUser, READ_ONLY, type Call, type TestUser } from "./helpers.js";

describe("directory reads", () => {
  let peer: TestPeer;
  let admin: Call;
  let owner: TestUser;
  let member: TestUser;
  let reader: TestUser;
  let clientId: string;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
    owner = await makeUser(peer, admin, "owner1");
    member = await makeUser(peer, admin, "member1");
    reader = await makeUser(peer, admin, "reader1", [READ_ONLY]);
    const c = await owner.call("/auth/users/me/clients", {
      method: "POST",
      json: { name: "owner's app", grant_type: "client_credentials", token_endpoint_auth_method: "client_secret_post" },
    });
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    clientId = c.body.client_id;
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("answers a member the same for another user's OAuth2 clients by either path: refused", async () => {
    expect((await member.call(`/auth/clients/${clientId}`)).status).toBe(403);
    expect((await member.call(`/auth/users/${owner.uuid}/clients`)).status).toBe(403);
    // Users themselves stay readable to members.
    expect((await member.call(`/auth/users/${owner.uuid}`)).status).toBe(200);
    // The owner reads its own.
    expect(
      (await owner.call("/auth/users/me/clients")).body.items.map((c: { client_id: string }) => c.client_id),
    ).toEqual([clientId]);
  });

  it("answers a reader of everything the same by either path: shown", async () => {
    expect((await reader.call(`/auth/clients/${clientId}`)).status).toBe(200);
    const listed = await reader.call(`/auth/users/${owner.uuid}/clients`);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((c: { client_id: string }) => c.client_id)).toEqual([clientId]);
  });

  it("shows members an edge's secrets by name and dates only, with no part of the secret", async () => {
    const edge = await makeEdge(owner.call, "owner-edge", "/auth/users/me/edges");
    const added = await admin(`/auth/edges/${edge.uuid}/secrets`, { method: "POST", json: { name: "second" } });
    expect(added.status).toBe(201);
    const views = [
      (await member.call(`/auth/edges/${edge.uuid}`)).body.secrets,
      (await member.call("/auth/edges")).body.items.find((e: { uuid: string }) => e.uuid === edge.uuid).secrets,
      (await member.call(`/auth/edges/${edge.uuid}/secrets`)).body.items,
      (await owner.call(`/auth/users/me/edges/${edge.uuid}/secrets`)).body.items,
      (await admin(`/auth/edges/${edge.uuid}/secrets`)).body.items,
    ];
    for (const secrets of views) {
      expect(secrets.map((s: { name: string }) => s.name).sort()).toEqual(["default", "second"]);
      for (const s of secrets) {
        expect(s.secret).toBe("");
        expect(JSON.stringify(s)).not.toContain(edge.secret.slice(0, 4));
      }
    }
  });
});
