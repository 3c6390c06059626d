// A user whom the administrator created (or whose password was reset) signs in to the console with the
// temporary password, is asked for a new one first, and goes on to the console; later the account page
// changes the password again. In both browsers a user may bring.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { startTestPeer, type TestPeer } from "../cloud/harness.js";
import { MEMBER_ROLE, adminToken, bearer, passwordToken } from "../cloud/oauth/helpers.js";
import { BROWSERS, launchBrowser } from "../support/browser.js";

describe("web console: first sign-in with a temporary password", () => {
  let peer: TestPeer;
  let admin: string;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = await adminToken(peer);
  }, 120_000);
  afterAll(async () => {
    await peer?.stop();
  }, 120_000);

  /** A user as the administrator makes one: a temporary password, shown once. */
  async function newUser(tag: string): Promise<{ name: string; temporary: string }> {
    const name = `first${tag}${process.pid}`;
    const r = await peer.api("/auth/users", {
      method: "POST",
      headers: bearer(admin),
      json: { name, role_uuids: [MEMBER_ROLE] },
    });
    expect(r.status).toBe(201);
    return {
      name,
      temporary: ((await r.json()) as { password: { temporary_password: string } }).password.temporary_password,
    };
  }

  async function fillPassword(page: Page, current: string, next: string, repeat = next) {
    const form = page.getByRole("form", { name: "Change password" });
    await form.getByLabel("Current password").fill(current);
    await form.getByLabel("New password", { exact: true }).fill(next);
    await form.getByLabel("Repeat the new password").fill(repeat);
  }

  for (const browserName of BROWSERS) {
    it(`asks for a new password before the console, then the account page changes it again, in ${browserName}`, async () => {
      const user = await newUser(browserName);
      const browser = await launchBrowser(browserName, { viewport: { width: 1366, height: 768 } });
      try {
        const page = await browser.context.newPage();
        await page.goto(`${peer.url}/console/`);
        await page.waitForURL(/\/api\/auth\/oauth2\/sign-in/);
        await page.getByLabel("User name").fill(user.name);
        await page.getByLabel("Password").fill(user.temporary);
        await page.getByRole("button", { name: "Sign in" }).click();
        const ask = page.getByRole("region", { name: "Choose a new password" });
        await expect.poll(() => ask.count(), { timeout: 30_000 }).toBe(1);

        // Two different entries are caught before anything is sent; a password the rules refuse shows why.
        await fillPassword(page, user.temporary, "Brand-new-password-7", "Brand-new-password-8");
        await ask.getByRole("button", { name: "Set password and continue" }).click();
        await expect.poll(() => ask.getByRole("alert").textContent(), { timeout: 30_000 }).toContain("differ");
        await fillPassword(page, user.temporary, "short");
        await ask.getByRole("button", { name: "Set password and continue" }).click();
        await expect.poll(() => ask.getByRole("alert").textContent(), { timeout: 30_000 }).toContain("at least 8");

        await fillPassword(page, user.temporary, "Brand-new-password-7");
        await ask.getByRole("button", { name: "Set password and continue" }).click();
        await expect.poll(() => page.getByTestId("who").textContent(), { timeout: 30_000 }).toBe(user.name);
        await expect.poll(() => page.getByRole("navigation", { name: "Main" }).count()).toBe(1);
        expect(await page.getByRole("alert").allTextContents()).toEqual([]);
        // The temporary password is gone; the new one signs in with the user's own scopes.
        await expect(passwordToken(peer, user.name, user.temporary)).rejects.toThrow();
        expect((await passwordToken(peer, user.name, "Brand-new-password-7")).scope).not.toBe("temporary");

        await page.goto(`${peer.url}/console/#/account`);
        const section = page.getByRole("region", { name: "Password" });
        await expect.poll(() => section.count(), { timeout: 30_000 }).toBe(1);
        await fillPassword(page, "Brand-new-password-7", "Second-password-9");
        await section.getByRole("button", { name: "Change password" }).click();
        await expect
          .poll(() => section.getByRole("status").textContent(), { timeout: 30_000 })
          .toBe("Password changed.");
        expect((await passwordToken(peer, user.name, "Second-password-9")).scope).not.toBe("temporary");
      } finally {
        await browser.close();
      }
    }, 240_000);
  }
});
