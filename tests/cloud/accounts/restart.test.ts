import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startTestPeer } from "../harness.js";
import { READ_ONLY, adminToken, caller, createUser, tokenOf } from "./helpers.js";

describe("accounts data survives a restart", () => {
  it("keeps users, roles, e-mails, passwords, tokens and catalogue timestamps", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-peer-"));
    try {
      const first = await startTestPeer({ dataDir });
      const admin = caller(first, await adminToken(first));
      const u = await createUser(admin, "yuri", { email: "yuri@example.com", nickname: "Y" });
      await admin(`/auth/users/${u.uuid}/roles/${READ_ONLY}`, { method: "PUT" });
      const token = await tokenOf(first, admin, u, "Secret-pass-99");
      await caller(first, token)("/auth/users/me");
      const roleBefore = (await admin(`/auth/roles/${READ_ONLY}`)).body;
      const userBefore = (await admin(`/auth/users/${u.uuid}`)).body;
      await first.stop();

      const second = await startTestPeer({ dataDir, config: { adminPassword: "Changed-password-9" } });
      try {
        const me = await caller(second, token)("/auth/users/me");
        expect(me.status).toBe(200);
        expect(me.body).toEqual(userBefore);
        const tokens = await caller(second, token)("/auth/users/me/tokens");
        expect(tokens.body.items[0].last_used_at).not.toBeNull();
        const admin2 = caller(second, await adminToken(second, "again"));
        expect((await admin2(`/auth/roles/${READ_ONLY}`)).body).toEqual(roleBefore);
        const adminUser = (await second.svc.accounts.findUserByName("admin"))!;
        expect(await second.svc.accounts.verifyPassword(adminUser.uuid, "Admin-password-1")).toBe(true);
        expect((await second.svc.accounts.signIn("yuri", "Secret-pass-99")).ok).toBe(true);
        expect((await admin2("/auth/users")).body.page.total_count).toBe(2);
      } finally {
        await second.stop();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
