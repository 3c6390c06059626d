// The console's main flow as steps any browser runs: the running measurement in the list, its plot
// drawn, and signing out (the refresh token revoked). tests/console/browsers.test.ts runs them in
// Chromium and Firefox.
import { expect } from "vitest";
import type { Page } from "playwright-core";
import type { Stack } from "../e2e/stack.js";
import { seriesPixels } from "./helpers.js";

/** The refresh token of the next token answer the page receives (its sign-in's code exchange). */
export function nextRefreshToken(page: Page): Promise<string> {
  return new Promise((resolve) => {
    page.on("response", async (r) => {
      if (r.url().endsWith("/api/auth/oauth2/token") && r.ok()) resolve((await r.json()).refresh_token);
    });
  });
}

/** The project's measurement list shows `measurement` as measuring. */
export async function expectListed(page: Page, s: Stack, measurement: string): Promise<void> {
  await page.goto(`${s.peer.url}/console/#/measurements?project=${s.cloud.projectUuid}`);
  const row = page.locator("tr", { has: page.locator(`a[href$="${measurement}"]`) });
  await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
  expect(await row.getAttribute("data-status")).toBe("measuring");
}

/** The measurement's page plots its counter: the line's colour is on the canvas. */
export async function expectPlotted(
  page: Page,
  s: Stack,
  measurement: string,
  dataId = "sample/counter",
): Promise<void> {
  await page.goto(`${s.peer.url}/console/#/measurement/${s.cloud.projectUuid}/${measurement}`);
  await expect.poll(() => page.getByRole("cell", { name: dataId, exact: true }).count(), { timeout: 30_000 }).toBe(1);
  await expect.poll(() => seriesPixels(page), { timeout: 30_000 }).toBeGreaterThan(100);
}

/** Sign out: the page says so, and the refresh token no longer works. */
export async function expectSignedOut(page: Page, s: Stack, refreshToken: string): Promise<void> {
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect.poll(() => page.getByRole("status").textContent(), { timeout: 30_000 }).toContain("signed out");
  const r = await fetch(`${s.peer.url}/api/auth/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: "console" }),
  });
  expect(r.status).toBe(400);
  expect(await r.json()).toMatchObject({ error: "invalid_grant" });
}
