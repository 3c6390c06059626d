// JSON request bodies: a field the route does not know is refused by name (a guessed
// `current_password` must not be silently dropped), form-encoded OAuth parameters stay lenient,
// and no error ever quotes the value of a password, secret or token field.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import {
  adminToken,
  caller,
  createUser,
  expectError,
  passwordGrantCaller,
  tokenOf,
  type Call,
} from "../accounts/helpers.js";

describe("cloud JSON request bodies", () => {
  let peer: TestPeer;
  let admin: Call;
  let me: Call;
  let meUuid: string;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
    const u = await createUser(admin, "body-user");
    meUuid = u.uuid;
    me = caller(peer, await tokenOf(peer, admin, u, "Body-secret-12"));
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("refuses unknown fields by name on user create, password change and edge create, and does nothing", async () => {
    const user = await admin("/auth/users", {
      method: "POST",
      json: { name: "extra-user", role_uuids: [], current_password: "x", Admin: true },
    });
    expectError(user, 400, "invalid_request");
    expect(user.body.title).toBe("invalid body: unknown fields: current_password, Admin");
    expect(user.body.properties).toEqual({ current_password: "is not a known field", Admin: "is not a known field" });
    expect((await admin("/auth/users?name[]=extra-user")).body.items).toEqual([]);

    const change = await me("/auth/users/me/password", {
      method: "PUT",
      json: { password: "Body-secret-34", current_password: "Body-secret-12" },
    });
    expectError(change, 400, "invalid_request");
    expect(change.body.title).toBe("invalid body: unknown field: current_password");
    expect(await peer.svc.accounts.verifyPassword(meUuid, "Body-secret-12")).toBe(true);

    const edge = await admin("/auth/edges", { method: "POST", json: { name: "edge-extra", client_secret: "chosen" } });
    expectError(edge, 400, "invalid_request");
    expect(edge.body.properties).toEqual({ client_secret: "is not a known field" });
    expect(JSON.stringify(edge.body)).not.toContain("chosen");
    const edges = await admin("/auth/edges?name[]=edge-extra");
    expect(edges.status).toBe(200);
    expect(edges.body.items).toEqual([]);
  });

  it("still matches known fields in any case and accepts a body without extras", async () => {
    const created = await admin("/auth/edges", { method: "POST", json: { Name: "edge-ok", NICKNAME: "ok" } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ name: "edge-ok", nickname: "ok" });
  });

  it("ignores unknown parameters of the form-encoded token endpoint (RFC 6749 3.2)", async () => {
    const res = await peer.api("/auth/oauth2/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "password",
        username: "admin",
        password: "Admin-password-1",
        some_extension: "1",
      }).toString(),
    });
    expect(res.status).toBe(200);
    expect(typeof ((await res.json()) as any).access_token).toBe("string");
  });

  it("never quotes a rejected password, secret or token in an error", async () => {
    const cases: Array<[Call, string, string, unknown, string]> = [
      [me, "PUT", "/auth/users/me/password", { password: "short", old_password: "Body-secret-12" }, "short"],
      [me, "PUT", "/auth/users/me/password", { password: 98765432, old_password: "Body-secret-12" }, "98765432"],
      [
        me,
        "PUT",
        "/auth/users/me/password",
        { password: "Body-secret-56", old_password: ["hidden-old"] },
        "hidden-old",
      ],
      [
        me,
        "PUT",
        "/auth/users/me/password",
        { password: "Body-secret-56", recovery_token: "r".repeat(4097) },
        "rrrrrrrr",
      ],
      [me, "POST", "/auth/users/me/password/check", { password: "p".repeat(513) }, "pppppppp"],
      [admin, "POST", "/auth/users/tokens/introspection", { token: { value: "tok-in-object" } }, "tok-in-object"],
    ];
    for (const [call, method, path, json, secret] of cases) {
      const r = await call(path, { method, json });
      expectError(r, 400, "invalid_request");
      const field = Object.keys(r.body.properties)[0]!;
      expect(r.body.title, path).toContain(field);
      expect(JSON.stringify(r.body), `${method} ${path}`).not.toContain(secret);
    }
    // A password-grant caller sees the same rule-only message.
    const temp = await createUser(admin, "body-temp");
    const restricted = await passwordGrantCaller(peer, "body-temp", temp.password.temporary_password);
    const short = await restricted("/auth/users/me/password", {
      method: "PUT",
      json: { password: "tiny", old_password: temp.password.temporary_password },
    });
    expectError(short, 400, "invalid_request");
    expect(short.body.properties.password).toBe("Expected a string at least 8 character(s) long");
    expect(JSON.stringify(short.body)).not.toContain("tiny");
  });
});
