// The spec's Limits rows that belong to accounts, at the boundary and one past it, and malformed
// input of every kind: never a 500.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { MEMBER, adminToken, caller, createUser, expectError, type Call } from "./helpers.js";

describe("accounts limits and malformed input", () => {
  let peer: TestPeer;
  let admin: Call;
  let u: any;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
    u = await createUser(admin, "limits");
  });
  afterAll(async () => {
    await peer.stop();
  });

  const post = (json: unknown) => admin("/auth/users", { method: "POST", json });

  it("user name: 1 to 256 characters, pattern ^[0-9a-zA-Z-_]*$", async () => {
    expect((await post({ name: "a", role_uuids: [] })).status).toBe(201);
    expect((await post({ name: "b".repeat(256), role_uuids: [] })).status).toBe(201);
    const long = await post({ name: "c".repeat(257), role_uuids: [] });
    expectError(long, 400, "invalid_request");
    expect(Object.keys(long.body.properties)).toEqual(["name"]);
    expectError(await post({ name: "", role_uuids: [] }), 400);
    expectError(await post({ name: "has space", role_uuids: [] }), 400);
    expect((await post({ name: "Ok-_9", role_uuids: [] })).status).toBe(201);
    expect((await admin(`/auth/users/${u.uuid}`, { method: "PATCH", json: { name: "d".repeat(256) } })).status).toBe(
      200,
    );
    expectError(await admin(`/auth/users/${u.uuid}`, { method: "PATCH", json: { name: "d".repeat(257) } }), 400);
  });

  it("nickname at most 512, description at most 65536", async () => {
    const p = (json: unknown) => admin(`/auth/users/${u.uuid}`, { method: "PATCH", json });
    expect((await p({ nickname: "n".repeat(512) })).status).toBe(200);
    expectError(await p({ nickname: "n".repeat(513) }), 400);
    expect((await p({ description: "d".repeat(65536) })).status).toBe(200);
    const over = await p({ description: "d".repeat(65537) });
    expectError(over, 400);
    expect(over.body.properties).toHaveProperty("description");
    expect(
      (await post({ name: "nick", nickname: "n".repeat(512), description: "d".repeat(65536), role_uuids: [] })).status,
    ).toBe(201);
    expectError(await post({ name: "nick2", nickname: "n".repeat(513), role_uuids: [] }), 400);
  });

  it("e-mail address: 1 to 256 characters", async () => {
    const at256 = "a".repeat(256 - "@example.com".length) + "@example.com";
    expect((await admin(`/auth/users/${u.uuid}/emails`, { method: "POST", json: { address: at256 } })).status).toBe(
      201,
    );
    expectError(await admin(`/auth/users/${u.uuid}/emails`, { method: "POST", json: { address: "a" + at256 } }), 400);
    expectError(await admin(`/auth/users/${u.uuid}/emails`, { method: "POST", json: { address: "" } }), 400);
    expectError(await post({ name: "mailer", role_uuids: [], email: "a" + at256 }), 400);
  });

  it("verification_token: 1 to 4096 characters", async () => {
    const anon = caller(peer);
    const at = (t: string) => anon("/auth/users/emails/verified", { method: "PUT", json: { verification_token: t } });
    const ok = await at("t".repeat(4096));
    expectError(ok, 400);
    expect(ok.body.properties).toEqual({ verification_token: "invalid or expired" });
    const over = await at("t".repeat(4097));
    expectError(over, 400);
    expect(over.body.properties.verification_token).not.toBe("invalid or expired");
    expectError(await at(""), 400);
  });

  it("per_page at most 200 (default 30), page at least 1 (default 1)", async () => {
    for (let i = 0; i < 31; i++) await post({ name: `bulk${String(i).padStart(2, "0")}`, role_uuids: [MEMBER] });
    const d = await admin("/auth/users?name[]=bulk");
    expect(d.body.items).toHaveLength(30);
    expect(d.body.page).toEqual({ next: true, prev: false, next_page: 2, total_page: 2, total_count: 31 });
    expect(d.body.items[0].name).toBe("bulk00");
    const p2 = await admin("/auth/users?name[]=bulk&page=2");
    expect(p2.body.items.map((x: any) => x.name)).toEqual(["bulk30"]);
    expect(p2.body.page).toEqual({ next: false, prev: true, prev_page: 1, total_page: 2, total_count: 31 });
    expect((await admin("/auth/users?per_page=200")).status).toBe(200);
    expectError(await admin("/auth/users?per_page=201"), 400, "invalid_request");
    expectError(await admin("/auth/users?per_page=0"), 400);
    expect((await admin("/auth/users?page=1")).status).toBe(200);
    expectError(await admin("/auth/users?page=0"), 400);
    expectError(await admin("/auth/users?page=-1"), 400);
    expectError(await admin("/auth/users?page=abc"), 400);
    expectError(await admin("/auth/users?page=1.5"), 400);
    expectError(await admin("/auth/users?min_sign_in_attempt_count=-1"), 400);
    expectError(await admin("/auth/users?disabled=yes"), 400);
    expectError(await admin("/auth/users?sort=password"), 400);
    expectError(await admin("/auth/users?uuid[]=zzz"), 400);
  });

  it("sorts and filters the user list", async () => {
    const desc = await admin("/auth/users?name[]=bulk&sort=name-&per_page=3");
    expect(desc.body.items.map((x: any) => x.name)).toEqual(["bulk30", "bulk29", "bulk28"]);
    const plus = await admin("/auth/users?name[]=bulk&sort=name+&per_page=2");
    expect(plus.body.items.map((x: any) => x.name)).toEqual(["bulk00", "bulk01"]);
    const exact = await admin(`/auth/users?name[]=${encodeURIComponent('"bulk1"')}`);
    expect(exact.body.items).toEqual([]);
    const two = await admin("/auth/users?name[]=bulk05&name[]=bulk07");
    expect(two.body.items.map((x: any) => x.name)).toEqual(["bulk05", "bulk07"]);
    const pct = await admin(`/auth/users?name[]=${encodeURIComponent("%")}`);
    expect(pct.body.items).toEqual([]);
    await admin(`/auth/users/${u.uuid}`, { method: "PATCH", json: { nickname: "The Nick" } });
    expect((await admin("/auth/users?nickname[]=nick")).body.items.map((x: any) => x.uuid)).toEqual([u.uuid]);
    await admin(`/auth/users/${u.uuid}/emails`, { method: "POST", json: { address: "limits-x@example.org" } });
    expect((await admin("/auth/users?email[]=limits-x@")).body.items.map((x: any) => x.uuid)).toEqual([u.uuid]);
    expect(
      (await admin(`/auth/users?email[]=${encodeURIComponent('"limits-x@example.org"')}`)).body.page.total_count,
    ).toBe(1);
    expect((await admin(`/auth/users?uuid[]=${u.uuid}`)).body.items).toHaveLength(1);
    const off = await admin(`/auth/users/${u.uuid}/disable`, { method: "PUT" });
    expect(off.status).toBe(200);
    expect((await admin("/auth/users?disabled=true")).body.items.map((x: any) => x.uuid)).toEqual([u.uuid]);
    await admin(`/auth/users/${u.uuid}/enable`, { method: "PUT" });
  });

  it("malformed bodies, wrong types, invalid ids and huge bodies never give a 500", async () => {
    const raw = (body: string, type = "application/json") =>
      admin("/auth/users", { method: "POST", body, headers: { "content-type": type } });
    expectError(await raw("{not json"), 400, "invalid_request");
    expectError(await raw("null"), 400);
    expectError(await raw("[]"), 400);
    expectError(await raw('"str"'), 400);
    expectError(await raw(""), 400);
    expectError(await post({ name: 42, role_uuids: [] }), 400);
    expectError(await post({ name: "x", role_uuids: "nope" }), 400);
    expectError(await post({ name: "x", role_uuids: [1] }), 400);
    expectError(await post({ name: "x" }), 400);
    expectError(await admin("/auth/users/not-a-uuid"), 400);
    expectError(await admin("/auth/users/00000000-0000-0000-0000-00000000000z"), 400);
    expectError(await admin(`/auth/users/00000000-0000-0000-0000-000000000042`), 404, "not_found");
    expectError(await admin(`/auth/users/${u.uuid}/emails/abc`, { method: "DELETE" }), 400);
    expectError(await admin(`/auth/users/${u.uuid}/emails/0`, { method: "DELETE" }), 400);
    expectError(await admin(`/auth/users/${u.uuid}/emails/99999999999999999999999`, { method: "DELETE" }), 400);
    expectError(await admin(`/auth/users/${u.uuid}/tokens/1e3`, { method: "DELETE" }), 400);
    const huge = await admin("/auth/users", {
      method: "POST",
      json: { name: "h", description: "x".repeat(2 * 1024 * 1024), role_uuids: [] },
    });
    expectError(huge, 413, "payload_too_large");
    const deep = "[".repeat(5000) + "]".repeat(5000);
    expectError(await raw(`{"name":"deep","role_uuids":${deep}}`), 400);
    expectError(await admin("/auth/users/me", { method: "PATCH", json: { name: { $gt: "" } } }), 400);
  });

  it("401 without credentials, 405 with Allow, 404 for unknown accounts paths", async () => {
    const anon = caller(peer);
    const r = await anon("/auth/users");
    expectError(r, 401, "unauthorized");
    expect(r.headers.get("www-authenticate")).toBeTruthy();
    const m = await admin("/auth/users", { method: "PUT" });
    expectError(m, 405, "method_not_allowed");
    expect(m.headers.get("allow")).toContain("GET");
    expect(m.headers.get("allow")).toContain("POST");
    expectError(await admin("/auth/rolez"), 404, "not_found");
  });
});

describe("request body cap (CLOUD_BODY_LIMIT)", () => {
  it("answers 413 in the error shape one byte past the configured limit", async () => {
    const peer = await startTestPeer({ config: { bodyLimit: 4096 } });
    try {
      const admin = caller(peer, await adminToken(peer));
      const body = (size: number) => {
        const base = JSON.stringify({ name: "cap", role_uuids: [], description: "" });
        return JSON.stringify({ name: "cap", role_uuids: [], description: "d".repeat(size - base.length) });
      };
      expect(Buffer.byteLength(body(4096))).toBe(4096);
      const over = await admin("/auth/users", {
        method: "POST",
        body: body(4097),
        headers: { "content-type": "application/json" },
      });
      expectError(over, 413, "payload_too_large");
      const at = await admin("/auth/users", {
        method: "POST",
        body: body(4096),
        headers: { "content-type": "application/json" },
      });
      expect(at.status, JSON.stringify(at.body)).toBe(201);
    } finally {
      await peer.stop();
    }
  });
});
