// The console's management pages in real Chromium against a real cloud peer: groups, sub-groups and
// projects made from the tree, members' roles and owners, the user's own OAuth2 clients (secret shown once),
// an edge's secret rotated (the old one refused at the token endpoint), and a user without the roles for
// these changes seeing no controls and the API's refusal in words.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../cloud/harness.js";
import { ADMIN_PASSWORD, adminToken, bearer, createUser } from "../cloud/oauth/helpers.js";
import { edgeToken } from "../cloud/org/helpers.js";
import { launchChromium, type TestBrowser } from "../support/browser.js";
import { signIn } from "./helpers.js";

const READ_ONLY = "09a57d93-7cb0-4a2d-bc5e-74b0eb04997b";

describe("web console: managing the organisation", () => {
  let peer: TestPeer;
  let browser: TestBrowser;
  let page: Page;
  let admin: string;
  let alice: { uuid: string; name: string; password: string };
  let bob: { uuid: string; name: string; password: string };
  const adminApi = async (p: string, init: RequestInit & { json?: unknown } = {}) => {
    const r = await peer.api(p, { ...init, headers: bearer(admin) });
    return { status: r.status, body: r.status === 204 ? undefined : await r.json() };
  };
  const project = async (name: string) =>
    (await adminApi("/auth/projects?per_page=200")).body.items.find((p: { name: string }) => p.name === name);
  const open = async (hash: string) => {
    await page.goto(`${peer.url}/console/#/${hash}`);
    await expect.poll(() => page.getByTestId("who").textContent(), { timeout: 30_000 }).toBe("admin");
  };
  /** The shown-once secret, waited for. */
  const shownSecret = async (p: Page = page) => {
    await expect.poll(() => p.getByTestId("secret").count(), { timeout: 30_000 }).toBe(1);
    return (await p.getByTestId("secret").textContent())!;
  };

  beforeAll(async () => {
    peer = await startTestPeer();
    admin = await adminToken(peer);
    alice = await createUser(peer, admin);
    bob = await createUser(peer, admin);
    browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    page = await browser.context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await peer?.stop();
  }, 120_000);

  it("creates a group, a sub-group and a project from the tree", async () => {
    await signIn(page, peer.url, "admin", ADMIN_PASSWORD);
    await open("org");
    const tree = page.getByRole("region", { name: "Groups and projects" });
    await tree.getByRole("form", { name: "Create group" }).getByLabel("Group name").fill("Vehicle lab");
    await tree.getByRole("button", { name: "Create group" }).click();
    await expect.poll(() => tree.getByRole("button", { name: "▾ Vehicle lab" }).count(), { timeout: 30_000 }).toBe(1);
    await tree.getByRole("button", { name: "▾ Vehicle lab" }).click();
    const group = page.getByRole("region", { name: "Group Vehicle lab" });
    await group.getByLabel("Sub-group name").fill("Test track");
    await group.getByRole("button", { name: "Create sub-group" }).click();
    await expect.poll(() => tree.getByRole("button", { name: "▾ Test track" }).count(), { timeout: 30_000 }).toBe(1);
    await group.getByLabel("Project name").fill("Brake trials");
    await group.getByRole("button", { name: "Create project" }).click();
    await expect
      .poll(() => tree.getByRole("button", { name: "Brake trials", exact: true }).count(), { timeout: 30_000 })
      .toBe(1);
    // The server holds them as the tree shows them: the project and the sub-group inside the group.
    const groups = (await adminApi("/auth/groups?per_page=200")).body.items as {
      uuid: string;
      name: string;
      parent_group_uuid: string | null;
    }[];
    const lab = groups.find((g) => g.name === "Vehicle lab")!;
    expect(lab.parent_group_uuid).toBeNull();
    expect(groups.find((g) => g.name === "Test track")!.parent_group_uuid).toBe(lab.uuid);
    expect((await project("Brake trials")).parent_group_uuid).toBe(lab.uuid);
  }, 120_000);

  it("adds members, changes a member's role and owner, and removes a member", async () => {
    await open("org");
    await page.getByRole("button", { name: "Brake trials", exact: true }).click();
    const details = page.getByRole("region", { name: "Project Brake trials" });
    const members = details.getByRole("table", { name: "Members of Brake trials" });
    const addForm = details.getByRole("form", { name: "Add a member" });
    for (const u of [alice, bob]) {
      await expect
        .poll(() => addForm.getByLabel("User", { exact: true }).locator("option").allTextContents(), {
          timeout: 30_000,
        })
        .toContain(u.name);
      await addForm.getByLabel("User", { exact: true }).selectOption({ label: u.name });
      await addForm.getByRole("button", { name: "Add member" }).click();
      await expect
        .poll(() => members.getByRole("row").filter({ hasText: u.name }).count(), { timeout: 30_000 })
        .toBe(1);
    }
    const aliceRole = members.getByLabel(`Role of ${alice.name}`);
    expect(await aliceRole.locator("option:checked").textContent()).toBe("member");
    await aliceRole.selectOption({ label: "read-only" });
    await expect
      .poll(
        async () =>
          (await adminApi(`/auth/projects/${(await project("Brake trials")).uuid}/members/${alice.uuid}`)).body
            .role_uuids,
        { timeout: 30_000 },
      )
      .toEqual([READ_ONLY]);
    await members.getByLabel(`${bob.name} is an owner`).click();
    await expect
      .poll(
        async () =>
          (await adminApi(`/auth/projects/${(await project("Brake trials")).uuid}/members/${bob.uuid}`)).body.is_owner,
        { timeout: 30_000 },
      )
      .toBe(true);
    // What the page shows after a reload is what the server holds.
    await open("org");
    await page.getByRole("button", { name: "Brake trials", exact: true }).click();
    await expect
      .poll(() => members.getByLabel(`Role of ${alice.name}`).locator("option:checked").textContent(), {
        timeout: 30_000,
      })
      .toBe("read-only");
    expect(await members.getByLabel(`${bob.name} is an owner`).isChecked()).toBe(true);
    // An owner cannot be removed: the API's refusal is shown; without the owner attribute, removing works.
    await members.getByRole("button", { name: `Remove ${bob.name}` }).click();
    await expect
      .poll(() => details.getByRole("alert").first().textContent(), { timeout: 30_000 })
      .toBe("unremovable owner member");
    await members.getByLabel(`${bob.name} is an owner`).click();
    await expect.poll(() => members.getByLabel(`${bob.name} is an owner`).isChecked(), { timeout: 30_000 }).toBe(false);
    await members.getByRole("button", { name: `Remove ${bob.name}` }).click();
    await expect
      .poll(() => members.getByRole("row").filter({ hasText: bob.name }).count(), { timeout: 30_000 })
      .toBe(0);
    const left = (await adminApi(`/auth/projects/${(await project("Brake trials")).uuid}/members`)).body.items.map(
      (m: { name: string }) => m.name,
    );
    // The list's default order (creation time, then UUID) is not promised between members added in one second.
    expect([...left].sort()).toEqual(["admin", alice.name].sort());
  }, 120_000);

  it("creates an OAuth2 client whose secret is shown once and works, and deletes it", async () => {
    await open("clients");
    const form = page.getByRole("form", { name: "New OAuth2 client" });
    await form.getByLabel("Client name").fill("nightly export");
    await form.getByRole("button", { name: "Create client" }).click();
    const secret = await shownSecret();
    const list = page.getByRole("table", { name: "OAuth2 clients" });
    const row = list.getByRole("row").filter({ hasText: "nightly export" });
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
    const clientId = (await row.locator("code").textContent())!;
    expect(await list.textContent()).not.toContain(secret);
    // The secret is real: a client-credentials token request with it succeeds.
    const token = await edgeToken(peer, { uuid: clientId, secret });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    // Shown once: after dismissing it and reloading, it is nowhere on the page.
    await page.getByRole("button", { name: "I have copied it" }).click();
    await page.reload();
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
    expect(await page.content()).not.toContain(secret);
    await row.getByRole("button", { name: "Delete nightly export" }).click();
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(0);
    expect((await adminApi("/auth/users/me/clients")).body.items).toEqual([]);
    expect((await edgeToken(peer, { uuid: clientId, secret })).status).toBe(401);
  }, 120_000);

  it("rotates an edge's secret (the new one shown once; the old one gets no token) and adds the edge to a project once", async () => {
    const made = await adminApi("/auth/edges", { method: "POST", json: { name: "press-7" } });
    const edge = { uuid: made.body.uuid as string, secret: made.body.client_secret as string };
    expect((await edgeToken(peer, edge)).status).toBe(200);
    await open("org");
    const edges = page.getByRole("table", { name: "Edges and their secrets" });
    await edges.getByRole("button", { name: "Rotate the secret of press-7" }).click();
    const fresh = await shownSecret();
    expect(fresh).not.toBe(edge.secret);
    // The list shows the new secret by name only (no part of it), and the old secret is gone.
    const secrets = () => edges.getByRole("row").filter({ hasText: "press-7" }).locator("td").nth(2).textContent();
    await expect.poll(secrets, { timeout: 30_000 }).not.toContain("default");
    expect(await secrets()).toMatch(/^rotated /);
    expect(await secrets()).not.toContain(fresh.slice(0, 4));
    expect((await edgeToken(peer, { uuid: edge.uuid, secret: fresh })).status).toBe(200);
    const old = await edgeToken(peer, edge);
    expect(old.status).toBe(401);
    expect(old.body).toMatchObject({ error: "invalid_client" });
    await page.getByRole("button", { name: "I have copied it" }).click();
    await page.reload();
    await expect.poll(() => edges.getByRole("row").filter({ hasText: "press-7" }).count(), { timeout: 30_000 }).toBe(1);
    expect(await page.content()).not.toContain(fresh);

    await page.getByRole("button", { name: "Brake trials", exact: true }).click();
    const details = page.getByRole("region", { name: "Project Brake trials" });
    const addEdge = details.getByRole("form", { name: "Add an edge to the project" });
    await expect
      .poll(
        () => page.locator("#addable-edges option").evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value)),
        { timeout: 30_000 },
      )
      .toContain("press-7");
    await addEdge.getByLabel("Edge name").fill("press-7");
    await addEdge.getByRole("button", { name: "Add to project" }).click();
    await expect
      .poll(() => details.getByRole("listitem").filter({ hasText: "press-7" }).count(), { timeout: 30_000 })
      .toBe(1);
    // Once there it is no longer offered, and adding it again is refused in the API's words.
    await expect
      .poll(
        () => page.locator("#addable-edges option").evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value)),
        { timeout: 30_000 },
      )
      .not.toContain("press-7");
    await addEdge.getByLabel("Edge name").fill("press-7");
    await addEdge.getByRole("button", { name: "Add to project" }).click();
    await expect.poll(() => details.getByRole("alert").textContent(), { timeout: 30_000 }).toMatch(/already/i);
  }, 120_000);

  it("shows a user without the roles no controls to change the organisation, and the API's refusal", async () => {
    const other = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const p = await other.context.newPage();
      await signIn(p, peer.url, alice.name, alice.password);
      await p.goto(`${peer.url}/console/#/org`);
      // Alice is a read-only member of the project: she sees it and its members, but no way to change them.
      await expect
        .poll(() => p.getByRole("button", { name: "Brake trials", exact: true }).count(), { timeout: 30_000 })
        .toBe(1);
      await p.getByRole("button", { name: "Brake trials", exact: true }).click();
      const members = p.getByRole("table", { name: "Members of Brake trials" });
      await expect
        .poll(() => members.getByRole("row").filter({ hasText: alice.name }).count(), { timeout: 30_000 })
        .toBe(1);
      expect(await members.getByRole("row").filter({ hasText: alice.name }).textContent()).toContain("read-only");
      // Once the page knows what she may do (the peer was asked, nothing is loading):
      await expect.poll(() => members.getAttribute("data-can-edit"), { timeout: 30_000 }).toBe("false");
      await p.waitForLoadState("networkidle");
      expect(await p.getByRole("form", { name: "Create group" }).count()).toBe(0);
      expect(await p.getByRole("form", { name: "Add a member" }).count()).toBe(0);
      expect(await p.getByRole("form", { name: "Add an edge to the project" }).count()).toBe(0);
      expect(await p.getByRole("form", { name: "New user" }).count()).toBe(0);
      expect(await p.getByRole("table", { name: "Users" }).getByRole("button").count()).toBe(0);
      expect(await members.getByRole("combobox").count()).toBe(0);
      expect(await members.getByRole("button").count()).toBe(0);
      // Made an owner she gets the controls; if that is taken away while her page is open, the server
      // refuses her change and the page says so in the API's words.
      const trials = (await project("Brake trials")).uuid;
      expect((await adminApi(`/auth/projects/${trials}/members/${alice.uuid}/owner`, { method: "PUT" })).status).toBe(
        200,
      );
      await p.reload();
      await expect
        .poll(() => p.getByRole("button", { name: "Brake trials", exact: true }).count(), { timeout: 30_000 })
        .toBe(1);
      await p.getByRole("button", { name: "Brake trials", exact: true }).click();
      await expect.poll(() => members.getByLabel(`Role of ${alice.name}`).count(), { timeout: 30_000 }).toBe(1);
      expect(
        (await adminApi(`/auth/projects/${trials}/members/${alice.uuid}/owner`, { method: "DELETE" })).status,
      ).toBe(204);
      await members.getByLabel(`Role of ${alice.name}`).selectOption({ label: "member" });
      const details = p.getByRole("region", { name: "Project Brake trials" });
      await expect.poll(() => details.getByRole("alert").textContent(), { timeout: 30_000 }).toBe("access denied");
      expect((await adminApi(`/auth/projects/${trials}/members/${alice.uuid}`)).body.role_uuids).toEqual([READ_ONLY]);
    } finally {
      await other.close();
    }
  }, 120_000);
});
