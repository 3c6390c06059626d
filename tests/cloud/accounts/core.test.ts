import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { ROLE_UUIDS, resolveScopes } from "../../../cloud/accounts/service/catalogue.js";
import { pathMatches, scopesAllow } from "../../../cloud/accounts/service/scopes.js";
import { checkPolicy, generatePassword } from "../../../cloud/accounts/service/password-rules.js";

describe("accounts core (service, catalogue, matcher)", () => {
  let peer: TestPeer;
  beforeAll(async () => {
    peer = await startTestPeer({ config: { lockoutThreshold: 3 } });
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("seeds admin as a super user with the configured password", async () => {
    const admin = await peer.svc.accounts.findUserByName("admin");
    expect(admin).toBeDefined();
    expect(await peer.svc.accounts.isSuper(admin!.uuid)).toBe(true);
    expect(await peer.svc.accounts.verifyPassword(admin!.uuid, "Admin-password-1")).toBe(true);
    expect(await peer.svc.accounts.verifyPassword(admin!.uuid, "Admin-password-2")).toBe(false);
    expect(await peer.svc.accounts.passwordState(admin!.uuid)).toMatchObject({
      isTemporary: false,
      expired: false,
      attemptCount: 0,
    });
  });

  it("makes a user name wait after lockoutThreshold failed sign-ins, the right password too, until cleared", async () => {
    const a = peer.svc.accounts;
    expect(await a.signIn("admin", "wrong-1")).toEqual({ ok: false, reason: "invalid" });
    expect(await a.signIn("admin", "wrong-2")).toEqual({ ok: false, reason: "invalid" });
    expect(await a.signIn("admin", "wrong-3")).toEqual({ ok: false, reason: "invalid" });
    expect(await a.signIn("admin", "Admin-password-1")).toEqual({
      ok: false,
      reason: "throttled",
      retryAfterMs: expect.any(Number),
    });
    const admin = (await a.findUserByName("admin"))!;
    a.signInBackOff.succeeded("admin");
    const ok = await a.signIn("ADMIN", "Admin-password-1");
    expect(ok.ok).toBe(true);
    expect((await a.findUser(admin.uuid))!.last_sign_in_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(await a.signIn("nobody", "x")).toEqual({ ok: false, reason: "invalid" });
  });

  it("builds a principal with the role scopes", async () => {
    const admin = (await peer.svc.accounts.findUserByName("admin"))!;
    const p = await peer.svc.accounts.principalForUser(admin.uuid, "bearer");
    expect(p).toMatchObject({ kind: "user", uuid: admin.uuid, isSuper: true, scopes: ["all:a"], via: "bearer" });
    expect(p!.restricted).toBeUndefined();
  });

  it("matches endpoint globs and lets a denial win", () => {
    expect(pathMatches("/auth/users/*", "/auth/users/abc")).toBe(true);
    expect(pathMatches("/auth/users/*", "/auth/users/abc/x")).toBe(false);
    expect(pathMatches("/auth/users/**", "/auth/users")).toBe(true);
    expect(pathMatches("/auth/users/**", "/auth/users/a/b/c")).toBe(true);
    expect(pathMatches("/auth/users/**", "/auth/usersX")).toBe(false);
    const readOnly = resolveScopes(["all:r"]);
    expect(scopesAllow(readOnly, "GET", "/auth/edges")).toBe(true);
    expect(scopesAllow(readOnly, "POST", "/auth/edges")).toBe(false);
    expect(scopesAllow(readOnly, "GET", "/auth/users/u1/tokens")).toBe(false);
    expect(scopesAllow([...readOnly, ...resolveScopes(["all:a"])], "GET", "/auth/users/u1/tokens")).toBe(false);
    expect(ROLE_UUIDS.owner).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("generates passwords that satisfy the policy", () => {
    for (let i = 0; i < 50; i++) expect(checkPolicy(generatePassword())).toEqual([]);
    expect(checkPolicy("short").map((e) => e.type)).toEqual([
      "min_length",
      "min_uppercase_alphabet_num",
      "min_number_num",
      "min_symbol_num",
    ]);
  });
});

describe("first start without CLOUD_ADMIN_PASSWORD", () => {
  it("prints a temporary password once and never resets it on restart", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-peer-"));
    const writes: string[] = [];
    const orig = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => (writes.push(String(chunk)), true)) as typeof process.stdout.write;
    let first: TestPeer;
    try {
      first = await startTestPeer({ dataDir, config: { adminPassword: "" } });
    } finally {
      process.stdout.write = orig;
    }
    const line = writes.join("").match(/temporary password: (\S+)/);
    expect(line).not.toBeNull();
    const admin = (await first.svc.accounts.findUserByName("admin"))!;
    expect(await first.svc.accounts.verifyPassword(admin.uuid, line![1]!)).toBe(true);
    expect((await first.svc.accounts.passwordState(admin.uuid))!.isTemporary).toBe(true);
    await first.stop();
    writes.length = 0;
    process.stdout.write = ((chunk: string) => (writes.push(String(chunk)), true)) as typeof process.stdout.write;
    let second: TestPeer;
    try {
      second = await startTestPeer({ dataDir, config: { adminPassword: "Other-password-1" } });
    } finally {
      process.stdout.write = orig;
    }
    expect(writes.join("")).not.toContain("temporary password");
    const again = (await second.svc.accounts.findUserByName("admin"))!;
    expect(again.uuid).toBe(admin.uuid);
    expect(await second.svc.accounts.verifyPassword(admin.uuid, line![1]!)).toBe(true);
    await second.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
