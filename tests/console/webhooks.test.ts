// The project's webhooks panel in real Chromium against a real cloud peer and a receiver on port 0: a
// hook added (its secret shown once), a test delivery sent and listed, a measurement's creation
// delivered, the hook deleted.
import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PASSWORD } from "../cloud/oauth/helpers.js";
import { json } from "../cloud/org/helpers.js";
import { createMeasurement } from "../cloud/measurements/helpers.js";
import { signIn, withPeerAndBrowser } from "./helpers.js";

describe("web console: a project's webhooks", () => {
  const ctx = withPeerAndBrowser();
  let project: string;
  const got: Array<{ signature: string; body: string }> = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on(
      "end",
      () => (got.push({ signature: String(req.headers["x-intdash-signature-256"]), body }), res.writeHead(204).end()),
    );
  });

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const group = (await json(ctx.call("/auth/groups", { method: "POST", json: { name: "Hook lab" } }), 201)).uuid;
    project = (
      await json(ctx.call(`/auth/groups/${group}/projects`, { method: "POST", json: { name: "Hooked" } }), 201)
    ).uuid;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("adds a webhook, tests it, shows its deliveries and deletes it", async () => {
    const { peer, call, page } = ctx;
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    await signIn(page, peer.url, "admin", ADMIN_PASSWORD);
    await page.goto(`${peer.url}/console/#/org`);
    await page
      .getByRole("region", { name: "Groups and projects" })
      .getByRole("button", { name: "Hooked", exact: true })
      .click();
    const form = page.getByRole("form", { name: "New webhook" });
    await form.getByLabel("Webhook URL").fill(url);
    await form.getByRole("button", { name: "Add webhook" }).click();
    await expect.poll(() => page.getByTestId("secret").count(), { timeout: 30_000 }).toBe(1);
    const secret = (await page.getByTestId("secret").textContent())!;
    const hooks = page.getByRole("table", { name: "Webhooks" });
    await expect.poll(() => hooks.locator("tbody tr").count(), { timeout: 30_000 }).toBe(1);

    await page.getByRole("button", { name: `Test webhook ${url}` }).click();
    const deliveries = page.getByRole("table", { name: "Latest webhook deliveries" });
    await expect
      .poll(() => deliveries.locator("tbody tr").first().textContent(), { timeout: 30_000 })
      .toMatch(/created \(test\)succeeded1$/);
    expect(got).toHaveLength(1);
    expect(crypto.createHmac("sha256", secret).update(got[0]!.body).digest("base64")).toBe(got[0]!.signature);

    await createMeasurement(call, {}, `/v1/projects/${project}/measurements`);
    await expect.poll(() => got.length, { timeout: 30_000 }).toBe(2);
    await page.getByRole("button", { name: "Refresh deliveries" }).click();
    await expect.poll(() => deliveries.locator("tbody tr").count(), { timeout: 30_000 }).toBe(2);
    expect(await deliveries.locator("tbody tr").first().textContent()).toContain("created");

    await page.getByRole("button", { name: `Delete webhook ${url}` }).click();
    await expect.poll(() => hooks.locator("tbody tr").count(), { timeout: 30_000 }).toBe(0);
    expect((await call(`/projects/${project}/hooks`)).body.items).toEqual([]);
  }, 120_000);
});
