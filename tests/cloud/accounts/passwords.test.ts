import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { TS, adminToken, caller, createUser, expectError, passwordGrantCaller, tokenOf, type Call } from "./helpers.js";
import { bodyText } from "./mailbox.js";

describe("passwords", () => {
  let peer: TestPeer;
  let admin: Call;
  beforeAll(async () => {
    peer = await startTestPeer({ config: { lockoutThreshold: 3 } });
    admin = caller(peer, await adminToken(peer));
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("a temporary password restricts the tokens obtained with it to changing it", async () => {
    const u = await createUser(admin, "ivan");
    const own = await passwordGrantCaller(peer, "ivan", u.password.temporary_password);
    expectError(await own("/auth/users/me/tokens"), 403, "forbidden");
    expect((await own("/auth/users/me")).status).toBe(200);
    const check = await own("/auth/users/me/password/check", { method: "POST", json: { password: "short" } });
    expect(check.status).toBe(200);
    expect(check.body.valid).toBe(false);
    const ch = await own("/auth/users/me/password", {
      method: "PUT",
      json: { password: "Fresh-pass-42", old_password: u.password.temporary_password },
    });
    expect(ch.status).toBe(200);
    expect(Object.keys(ch.body).sort()).toEqual([
      "attempt_count",
      "created_at",
      "expired_at",
      "is_temporary",
      "last_attempt_at",
      "updated_at",
    ]);
    expect(ch.body).toMatchObject({ attempt_count: 0, is_temporary: false });
    expect(ch.body.expired_at).toMatch(TS);
    expect(Date.parse(ch.body.expired_at) - Date.now()).toBeGreaterThan(364 * 86400_000);
    // The restricted access token stays restricted (its claim says so); a new sign-in is not.
    expect((await (await passwordGrantCaller(peer, "ivan", "Fresh-pass-42"))("/auth/users/me/tokens")).status).toBe(
      200,
    );
  });

  it("checks the policy with the typed errors", async () => {
    const u = await createUser(admin, "julia");
    const me = caller(peer, await tokenOf(peer, admin, u, "Jx-secret-11"));
    const good = await me("/auth/users/me/password/check", { method: "POST", json: { Password: "Another-pass-9" } });
    expect(good.body).toEqual({ valid: true, errors: [] });
    const bad = await me("/auth/users/me/password/check", { method: "POST", json: { password: "julia" } });
    expect(bad.body.valid).toBe(false);
    expect(bad.body.errors.map((e: any) => e.type)).toEqual([
      "min_length",
      "min_uppercase_alphabet_num",
      "min_number_num",
      "min_symbol_num",
      "allowed_same_username",
    ]);
    expect(bad.body.errors[0]).toEqual({ type: "min_length", value: 8, message: expect.any(String) });
    const same = await me("/auth/users/me/password/check", { method: "POST", json: { password: "Jx-secret-11" } });
    expect(same.body.errors.map((e: any) => e.type)).toContain("allowed_same_previous_password");
    const chars = await me("/auth/users/me/password/check", { method: "POST", json: { password: "Pässword-12345" } });
    expect(chars.body.errors.map((e: any) => e.type)).toEqual(["allowed_characters"]);
    // password to check: at most 512 characters
    const long = "Aa1-" + "x".repeat(508);
    const max = await me("/auth/users/me/password/check", { method: "POST", json: { password: long } });
    expect(max.status).toBe(200);
    expect(max.body.valid).toBe(true);
    expectError(
      await me("/auth/users/me/password/check", { method: "POST", json: { password: long + "x" } }),
      400,
      "invalid_request",
    );
  });

  it("changePassword: limits, old password, policy", async () => {
    const u = await createUser(admin, "karl");
    const me = caller(peer, await tokenOf(peer, admin, u, "Kx-secret-123"));
    const put = (json: unknown) => me("/auth/users/me/password", { method: "PUT", json });
    const e1 = await put({ password: "Aa1-xxx", old_password: "Kx-secret-123" });
    expectError(e1, 400, "invalid_request");
    expect(e1.body.properties.password).toBeDefined();
    expectError(await put({ password: "Aa1-" + "x".repeat(509), old_password: "Kx-secret-123" }), 400);
    // old_password: at most 512 (512 is decoded and checked, 513 is refused by the schema)
    const old512 = await put({ password: "Aa1-xxxx", old_password: "x".repeat(512) });
    expectError(old512, 400);
    expect(old512.body.properties).toEqual({ old_password: "incorrect" });
    const old513 = await put({ password: "Aa1-xxxx", old_password: "x".repeat(513) });
    expectError(old513, 400);
    expect(old513.body.properties.old_password).not.toBe("incorrect");
    // new password: 8 to 512
    expectError(await put({ password: "Aa1-xxx", old_password: "Kx-secret-123" }), 400);
    const noOld = await put({ password: "Aa1-xxxx" });
    expectError(noOld, 400);
    expect(noOld.body.properties).toEqual({ old_password: "required" });
    expectError(await put({ password: "Aa1-xxxx", old_password: "wrong" }), 400);
    const weak = await put({ password: "aaaaaaaa", old_password: "Kx-secret-123" });
    expectError(weak, 400);
    expect(weak.body.title).toContain("min_uppercase_alphabet_num");
    expect((await put({ password: "Aa1-xxxx", old_password: "Kx-secret-123" })).status).toBe(200);
    expect((await put({ password: "Aa1-" + "y".repeat(508), old_password: "Aa1-xxxx" })).status).toBe(200);
    expect(await peer.svc.accounts.verifyPassword(u.uuid, "Aa1-" + "y".repeat(508))).toBe(true);
  });

  it("makes the name wait after the threshold, lists by attempt counts, and unlocks", async () => {
    const u = await createUser(admin, "lena");
    await tokenOf(peer, admin, u, "Lx-secret-123");
    for (let i = 0; i < 2; i++)
      expect(await peer.svc.accounts.signIn("lena", "nope")).toEqual({ ok: false, reason: "invalid" });
    const two = await admin("/auth/users?min_sign_in_attempt_count=2&max_sign_in_attempt_count=2");
    expect(two.body.items.map((x: any) => x.name)).toEqual(["lena"]);
    expect(two.body.items[0].password.attempt_count).toBe(2);
    expect(two.body.items[0].password.last_attempt_at).toMatch(TS);
    expect(await peer.svc.accounts.signIn("lena", "nope")).toEqual({ ok: false, reason: "invalid" });
    expect(await peer.svc.accounts.signIn("lena", "Lx-secret-123")).toMatchObject({ ok: false, reason: "throttled" });
    expect((await admin("/auth/users?min_sign_in_attempt_count=3")).body.items.map((x: any) => x.name)).toEqual([
      "lena",
    ]);
    expect((await admin("/auth/users?max_sign_in_attempt_count=0")).body.items.map((x: any) => x.name)).not.toContain(
      "lena",
    );
    const un = await admin(`/auth/users/${u.uuid}/password/unlock`, { method: "PUT" });
    expect(un.status).toBe(200);
    expect(un.body.attempt_count).toBe(0);
    expect(un.body.temporary_password).toBeUndefined();
    expect((await peer.svc.accounts.signIn("lena", "Lx-secret-123")).ok).toBe(true);
    expect((await admin(`/auth/users/${u.uuid}`)).body.last_sign_in_at).toMatch(TS);
  });

  it("resets to a temporary password", async () => {
    const u = await createUser(admin, "mia");
    await tokenOf(peer, admin, u, "Mx-secret-1234");
    const r = await admin(`/auth/users/${u.uuid}/password`, { method: "PUT" });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual([
      "attempt_count",
      "created_at",
      "expired_at",
      "is_temporary",
      "last_attempt_at",
      "temporary_password",
      "updated_at",
    ]);
    expect(r.body).toMatchObject({ is_temporary: true, attempt_count: 0 });
    expect(r.body.temporary_password).toMatch(/^.{20}$/);
    expect(await peer.svc.accounts.verifyPassword(u.uuid, r.body.temporary_password)).toBe(true);
    expect(await peer.svc.accounts.verifyPassword(u.uuid, "Mx-secret-1234")).toBe(false);
    expect((await admin(`/auth/users?is_temporary=true&name[]="mia"`)).body.page.total_count).toBe(1);
  });

  it("recovers a password through the reset mail (outbox), single use", async () => {
    const u = await createUser(admin, "nina", { email: "nina@example.com" });
    await tokenOf(peer, admin, u, "Nx-secret-123");
    const anon = caller(peer);
    // unverified address: no mail, same answer
    const outbox = path.join(peer.dataDir, "outbox");
    const count = () => (fs.existsSync(outbox) ? fs.readdirSync(outbox).length : 0);
    const before = count();
    expect(
      (await anon("/auth/users/password/recovery", { method: "POST", json: { address: "nina@example.com" } })).status,
    ).toBe(204);
    expect(
      (await anon("/auth/users/password/recovery", { method: "POST", json: { address: "nobody@example.com" } })).status,
    ).toBe(204);
    expect(count()).toBe(before);
    const verifyMail = fs
      .readdirSync(outbox)
      .map((f) => bodyText(fs.readFileSync(path.join(outbox, f), "utf8")))
      .find((t) => t.includes("nina@example.com"))!;
    const tok = verifyMail.match(/\(e-mail id \d+\):\r?\n(\S+)/)![1]!;
    expect(
      (await anon("/auth/users/emails/verified", { method: "PUT", json: { verification_token: tok } })).status,
    ).toBe(200);
    expect(
      (await anon("/auth/users/password/recovery", { method: "POST", json: { address: "NINA@example.com" } })).status,
    ).toBe(204);
    expect(count()).toBe(before + 1);
    const newest = fs
      .readdirSync(outbox)
      .sort()
      .map((f) => fs.readFileSync(path.join(outbox, f), "utf8"))
      .find((raw) => raw.includes("Reset your password"))!;
    const recovery = bodyText(newest).match(/Recovery token:\r?\n(\S+)/)![1]!;
    const ch = await anon("/auth/users/me/password", {
      method: "PUT",
      json: { password: "Recovered-pw-7", recovery_token: recovery },
    });
    expect(ch.status).toBe(200);
    expect(ch.body.is_temporary).toBe(false);
    expect(await peer.svc.accounts.verifyPassword(u.uuid, "Recovered-pw-7")).toBe(true);
    expectError(
      await anon("/auth/users/me/password", {
        method: "PUT",
        json: { password: "Recovered-pw-8", recovery_token: recovery },
      }),
      400,
    );
    expectError(
      await anon("/auth/users/me/password", {
        method: "PUT",
        json: { password: "Recovered-pw-8", old_password: "Recovered-pw-7" },
      }),
      401,
      "unauthorized",
    );
  });

  it("an expired password restricts the tokens obtained with it until it is changed; an expired recovery token is refused", async () => {
    const u = await createUser(admin, "olaf", { email: "olaf@example.com" });
    await tokenOf(peer, admin, u, "Ox-secret-123");
    const p = (await peer.svc.accounts.users.password(u.uuid))!;
    await peer.svc.accounts.users.setPassword(u.uuid, p.hash, false, "2000-01-01T00:00:00Z", p.updated_at);
    expect(await peer.svc.accounts.passwordState(u.uuid)).toMatchObject({ expired: true, isTemporary: false });
    const me = await passwordGrantCaller(peer, "olaf", "Ox-secret-123");
    expectError(await me("/auth/users/me/tokens"), 403, "forbidden");
    expect((await me("/auth/users/me")).status).toBe(200);
    const ch = await me("/auth/users/me/password", {
      method: "PUT",
      json: { password: "Ox-renewed-456", old_password: "Ox-secret-123" },
    });
    expect(ch.status).toBe(200);
    expect(Date.parse(ch.body.expired_at)).toBeGreaterThan(Date.now());
    expect((await (await passwordGrantCaller(peer, "olaf", "Ox-renewed-456"))("/auth/users/me/tokens")).status).toBe(
      200,
    );
    // Recovery tokens live one hour.
    await peer.svc.accounts.emails.markVerified(u.emails[0].id, new Date().toISOString());
    const outbox = path.join(peer.dataDir, "outbox");
    const before = new Set(fs.readdirSync(outbox));
    expect(
      (await caller(peer)("/auth/users/password/recovery", { method: "POST", json: { address: "olaf@example.com" } }))
        .status,
    ).toBe(204);
    const file = fs.readdirSync(outbox).find((f) => !before.has(f))!;
    const recovery = bodyText(fs.readFileSync(path.join(outbox, file), "utf8")).match(/Recovery token:\r?\n(\S+)/)![1]!;
    await peer.svc.db.run("UPDATE password_recoveries SET expired_at = ? WHERE user_uuid = ?", [
      "2000-01-01T00:00:00Z",
      u.uuid,
    ]);
    const late = await caller(peer)("/auth/users/me/password", {
      method: "PUT",
      json: { password: "Ox-late-789", recovery_token: recovery },
    });
    expectError(late, 400, "invalid_request");
    expect(late.body.properties).toEqual({ recovery_token: "invalid or expired" });
    expect(await peer.svc.accounts.verifyPassword(u.uuid, "Ox-renewed-456")).toBe(true);
  });
});

describe("passwords that never expire (CLOUD_PASSWORD_LIFETIME_DAYS=0)", () => {
  it("omits expired_at", async () => {
    const peer = await startTestPeer({ config: { passwordLifetimeDays: 0 } });
    try {
      const admin = caller(peer, await adminToken(peer));
      const u = await createUser(admin, "pia");
      expect(u.password.expired_at).toBeUndefined();
      const me = caller(peer, await tokenOf(peer, admin, u, "Px-secret-123"));
      const got = await me("/auth/users/me");
      expect(got.body.password.expired_at).toBeUndefined();
      expect(got.body.password.is_temporary).toBe(false);
    } finally {
      await peer.stop();
    }
  });
});
