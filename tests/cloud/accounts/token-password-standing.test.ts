// An API token is a credential of its own: a temporary or expired password of its user restricts
// only tokens obtained with that password (password grant), not the API token an administrator made.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestPeer } from "../harness.js";
import { caller, createUser, expectError, startPeerWithAdmin, passwordGrantCaller, type Call } from "./helpers.js";

describe("API tokens and the user's password standing", () => {
  let peer: TestPeer;
  let admin: Call;
  beforeAll(async () => ({ peer, admin } = await startPeerWithAdmin()));
  afterAll(() => peer?.stop());

  it("an administrator-made API token works while the password is still temporary; a password-grant token does not", async () => {
    const u = await createUser(admin, "service-user");
    expect(u.password.is_temporary).toBe(true);
    const made = await admin(`/auth/users/${u.uuid}/tokens`, { method: "POST", json: { name: "ci" } });
    expect(made.status).toBe(201);
    const viaToken = caller(peer, made.body.token);
    const list = await viaToken("/auth/users/me/tokens");
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.items.map((t: any) => t.name)).toEqual(["ci"]);
    const bearer = await passwordGrantCaller(peer, u.name, u.password.temporary_password);
    const refused = await bearer("/auth/users/me/tokens");
    expectError(refused, 403, "forbidden");
    expect(refused.body.title).toMatch(/temporary or expired/);
    expect((await bearer("/auth/users/me")).status).toBe(200);
  });

  it("an expired password leaves the API token working and restricts a password-grant token", async () => {
    const u = await createUser(admin, "expiring-user");
    const made = await admin(`/auth/users/${u.uuid}/tokens`, { method: "POST", json: { name: "ci" } });
    const viaToken = caller(peer, made.body.token);
    const changed = await viaToken("/auth/users/me/password", {
      method: "PUT",
      json: { password: "Ex-secret-123", old_password: u.password.temporary_password },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const p = (await peer.svc.accounts.users.password(u.uuid))!;
    await peer.svc.accounts.users.setPassword(u.uuid, p.hash, false, "2000-01-01T00:00:00Z", p.updated_at);
    expect(await peer.svc.accounts.passwordState(u.uuid)).toMatchObject({ expired: true, isTemporary: false });
    expect((await viaToken("/auth/users/me/tokens")).status).toBe(200);
    const bearer = await passwordGrantCaller(peer, u.name, "Ex-secret-123");
    expectError(await bearer("/auth/users/me/tokens"), 403, "forbidden");
  });
});
