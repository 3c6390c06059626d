// The web console in real Chromium against a real cloud peer whose agent streams the sample connector:
// signing in through the sign-in page, the measurement list, the live plot, access per project,
// users and API tokens made through the console, and signing out.
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, type TestBrowser } from "../support/browser.js";
import { ADMIN_PASSWORD, adminToken, createUser, passwordToken } from "../cloud/oauth/helpers.js";
import { until, type Stack } from "../e2e/stack.js";
import { plottedPoints, seriesPixels, signIn, startSampleStack } from "./helpers.js";

describe("web console", () => {
  let s: Stack;
  let browser: TestBrowser;
  let context: BrowserContext;
  let page: Page;
  let measurement: string;

  beforeAll(async () => {
    s = await startSampleStack();
    measurement = (
      await until(
        async () => (await s.measurements()).find((m) => m.status === "measuring" && m.received_data_points > 0),
        30_000,
        "a running measurement",
      )
    ).uuid;
    browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    context = browser.context;
    page = await context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
  }, 120_000);

  it("is served at /console/ with its security headers, and / leads there", async () => {
    const root = await fetch(`${s.peer.url}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/console/");
    const index = await fetch(`${s.peer.url}/console/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(index.headers.get("cache-control")).toBe("no-cache");
    expect(index.headers.get("x-frame-options")).toBe("DENY");
    const csp = index.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await index.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${s.peer.url}${script}`);
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(asset.headers.get("cache-control")).toContain("immutable");
    const missing = await fetch(`${s.peer.url}/console/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ type: "not_found" });
    expect((await fetch(`${s.peer.url}/console/../api/openapi.json`)).status).not.toBe(500);
  }, 120_000);

  it("signs in through the sign-in page and lists the running measurement, updating it", async () => {
    await signIn(page, s.peer.url, "admin", ADMIN_PASSWORD);
    await page.goto(`${s.peer.url}/console/#/measurements?project=${s.cloud.projectUuid}`);
    const row = page.locator("tr", { has: page.locator(`a[href$="${measurement}"]`) });
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
    expect(await row.getAttribute("data-status")).toBe("measuring");
    const points = async () =>
      Number(((await row.locator("td.num").first().textContent()) ?? "").split("/")[0]!.replace(/\D/g, ""));
    const first = await points();
    await expect.poll(points, { timeout: 30_000 }).toBeGreaterThan(first);
  }, 120_000);

  it("plots the running measurement's counter and follows it live", async () => {
    await page.goto(`${s.peer.url}/console/#/measurement/${s.cloud.projectUuid}/${measurement}`);
    await expect
      .poll(() => page.getByRole("cell", { name: "sample/counter", exact: true }).count(), { timeout: 30_000 })
      .toBe(1);
    await expect.poll(() => seriesPixels(page), { timeout: 30_000 }).toBeGreaterThan(100);
    expect(await page.getByTestId("plot").getAttribute("data-live")).toBe("true");
    const before = await plottedPoints(page);
    await expect.poll(() => plottedPoints(page), { timeout: 30_000 }).toBeGreaterThan(before + 100);
    expect(await seriesPixels(page)).toBeGreaterThan(100);
    // Bytes are not plotted: their first points are in a table, in hex.
    await expect
      .poll(() => page.getByRole("table", { name: "Data of sample/raw" }).locator("tbody tr").count(), {
        timeout: 30_000,
      })
      .toBeGreaterThan(0);
    expect(
      await page.getByRole("table", { name: "Data of sample/raw" }).locator("td.value").first().textContent(),
    ).toMatch(/^00 00 00 00 00 00 00 [0-9a-f]{2} 61 61 61 61$/);
  }, 120_000);

  it("hides a project from a user without access, and its URLs give that user no data", async () => {
    const user = await createUser(s.peer, await adminToken(s.peer));
    const other = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const p = await other.context.newPage();
      await signIn(p, s.peer.url, user.name, user.password);
      await p.goto(`${s.peer.url}/console/#/measurements`);
      await expect
        .poll(() => p.locator("select").first().locator("option").allTextContents())
        .toEqual(["Default project"]);
      await p.goto(`${s.peer.url}/console/#/measurement/${s.cloud.projectUuid}/${measurement}`);
      await expect
        .poll(() => p.getByRole("alert").first().textContent(), { timeout: 30_000 })
        .toMatch(/forbidden|not allowed|denied/i);
      expect(await p.getByRole("cell", { name: "sample/counter", exact: true }).count()).toBe(0);
      expect(await p.locator("[data-testid=plot] canvas").count()).toBe(0);
    } finally {
      await other.close();
    }
  }, 120_000);

  it("creates a user (temporary password shown once) and an API token (shown once) that works", async () => {
    await page.goto(`${s.peer.url}/console/#/org`);
    await page.getByRole("form", { name: "New user" }).getByLabel("User name").fill("console-made");
    await page.getByRole("button", { name: "Create user" }).click();
    await expect.poll(() => page.getByTestId("secret").count(), { timeout: 30_000 }).toBe(1);
    const made = page.getByRole("table", { name: "Users" }).getByRole("row").filter({ hasText: "console-made" });
    await expect.poll(() => made.count()).toBe(1);
    expect(await made.getByRole("cell").nth(1).textContent()).toBe("member");
    await page.getByRole("button", { name: "demo", exact: true }).click();
    await expect
      .poll(() => page.getByRole("listitem").filter({ hasText: "Demo edge" }).count(), { timeout: 30_000 })
      .toBe(1);
    await page.getByRole("button", { name: "I have copied it" }).click();
    expect(await page.getByTestId("secret").count()).toBe(0);

    await page.goto(`${s.peer.url}/console/#/account`);
    await page.getByLabel("Token name").fill("from the console");
    await page.getByRole("button", { name: "Create token" }).click();
    const secret = page.getByTestId("secret");
    await expect.poll(() => secret.count(), { timeout: 30_000 }).toBe(1);
    const token = (await secret.textContent())!;
    // The picture shows the token once and the list that already holds it (without the token itself).
    const tokens = page.getByRole("table", { name: "API tokens" });
    await expect
      .poll(() => tokens.getByRole("cell", { name: "from the console", exact: true }).count(), { timeout: 30_000 })
      .toBe(1);
    expect(await tokens.textContent()).not.toContain(token);
    const me = await fetch(`${s.peer.url}/api/auth/users/me`, { headers: { "X-Intdash-Token": token } });
    expect(me.status).toBe(200);
    // Shown once: after dismissing it and reloading the list, the token is nowhere on the page.
    await page.getByRole("button", { name: "I have copied it" }).click();
    // A reload signs in again (tokens live in memory only); the sign-in session skips the page.
    await page.reload();
    await expect.poll(() => page.getByTestId("who").textContent(), { timeout: 30_000 }).toBe("admin");
    await expect
      .poll(() => page.getByRole("cell", { name: "from the console", exact: true }).count(), { timeout: 30_000 })
      .toBe(1);
    expect(await page.content()).not.toContain(token);
  }, 120_000);

  it("shows the edges page", async () => {
    await page.goto(`${s.peer.url}/console/#/edges`);
    const edges = page.getByRole("table", { name: "Edges" });
    await expect.poll(() => edges.locator("tbody tr .badge.measuring").count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await edges.locator("tbody tr .badge.connected").first().textContent()).toBe("connected (websocket)");
    // The broker's connections, as the page reads them: members see the project's, others are refused.
    const url = `${s.peer.url}/api/v1/projects/${s.cloud.projectUuid}/edge_connections`;
    const conns = await (await fetch(url, { headers: { "X-Intdash-Token": s.cloud.token } })).json();
    expect(conns.items).toEqual([
      {
        edge_uuid: s.cloud.edgeUuid,
        transport: "websocket",
        upstreams: 1,
        downstreams: 0,
        data_rate: expect.any(Object),
      },
    ]);
    const outsider = await createUser(s.peer, await adminToken(s.peer));
    const theirs = await passwordToken(s.peer, outsider.name, outsider.password);
    expect((await fetch(url, { headers: { authorization: `Bearer ${theirs.access_token}` } })).status).toBe(403);
  }, 120_000);

  it("signs out by revoking the refresh token", async () => {
    const refreshToken = new Promise<string>((resolve) => {
      page.on("response", async (r) => {
        if (r.url().endsWith("/api/auth/oauth2/token") && r.ok()) resolve((await r.json()).refresh_token);
      });
    });
    // A reload signs in again (tokens are in memory only); the sign-in session skips the page.
    await page.goto(`${s.peer.url}/console/#/measurements`);
    await page.reload();
    const refresh = await refreshToken;
    await expect.poll(() => page.getByTestId("who").textContent(), { timeout: 30_000 }).toBe("admin");
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect.poll(() => page.getByRole("status").textContent(), { timeout: 30_000 }).toContain("signed out");
    const r = await fetch(`${s.peer.url}/api/auth/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refresh, client_id: "console" }),
    });
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ error: "invalid_grant" });
    // The sign-in session ended too: signing in again asks for the password.
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/api\/auth\/oauth2\/sign-in/);
    expect(await page.getByLabel("Password").count()).toBe(1);
  }, 120_000);
});
