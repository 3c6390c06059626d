// The console guide's pictures (docs/guide/console.md), taken in Chromium from the running demo (`npm start`, the
// compiled dist/bin/demo.js on a fresh data directory): each picture is taken after the step the guide describes
// has been checked, the guide must show exactly the pictures taken, and docs/guide/images must hold exactly the
// pictures the guide shows. `npm run screenshots` runs this test with CONSOLE_SCREENSHOTS set to a folder and
// copies what it took into docs/guide/images.
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Locator, Page } from "playwright-core";
import { afterAll, expect, it } from "vitest";
import { startDemo } from "../support/demo.js";
import { freePort } from "../support/nats.js";
import { launchChromium, type TestBrowser } from "../support/browser.js";
import { seriesPixels, signIn } from "../console/helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const GUIDE = path.join(ROOT, "docs/guide/console.md");
const IMAGES = path.join(ROOT, "docs/guide/images");
/** A picture larger than this is a sign of a whole long page where a part of it would do. */
const MAX_BYTES = 400 * 1024;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "console-guide-"));
const pictures = new Map<string, Buffer>();
let demo: ChildProcess | undefined;
let browser: TestBrowser | undefined;
let second: TestBrowser | undefined;

afterAll(async () => {
  await browser?.close();
  await second?.close();
  if (demo && demo.exitCode === null && demo.signalCode === null) {
    const exited = new Promise((r) => demo!.once("exit", r));
    demo.kill("SIGINT");
    await exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
}, 120_000);

/** The picture `console-<name>.png`: the window as it is, or the smallest box around some regions of the page. */
async function picture(page: Page, name: string, regions: Locator[] = []): Promise<void> {
  let shot: Buffer;
  if (regions.length === 0) shot = await page.screenshot();
  else {
    // Page coordinates, read in one go (a live page keeps moving: Playwright's stable-element waits may never end).
    const boxes = await Promise.all(
      regions.map((r) =>
        r.evaluate((el) => {
          const b = el.getBoundingClientRect();
          return { x: b.x + scrollX, y: b.y + scrollY, right: b.right + scrollX, bottom: b.bottom + scrollY };
        }),
      ),
    );
    const [x0, y0] = [Math.min(...boxes.map((b) => b.x)), Math.min(...boxes.map((b) => b.y))];
    const [x1, y1] = [Math.max(...boxes.map((b) => b.right)), Math.max(...boxes.map((b) => b.bottom))];
    shot = await page.screenshot({ fullPage: true, clip: { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } });
  }
  pictures.set(`console-${name}.png`, shot);
  if (process.env.CONSOLE_SCREENSHOTS) {
    fs.mkdirSync(process.env.CONSOLE_SCREENSHOTS, { recursive: true });
    fs.writeFileSync(path.join(process.env.CONSOLE_SCREENSHOTS, `console-${name}.png`), shot);
  }
}

const shownByGuide = () =>
  new Set(
    [...fs.readFileSync(GUIDE, "utf8").matchAll(/!\[[^\]]*\]\(images\/(console-[\w-]+\.png)\)/g)].map((m) => m[1]!),
  );

it("takes the guide's pictures from the running demo, and the guide shows exactly those", async () => {
  const port = await freePort();
  const started = await startDemo(dir, port);
  demo = started.child;
  const out = started.output;
  const base = `http://127.0.0.1:${port}`;
  const run = /the vehicle's run\s+\S+#\/measurement\/([0-9a-f-]{36})\/([0-9a-f-]{36})/.exec(out());
  expect(run, out()).not.toBeNull();
  const [project, measurement] = [run![1]!, run![2]!];
  const password = fs.readFileSync(path.join(dir, "admin-password"), "utf8").trim();
  const token = fs.readFileSync(path.join(dir, "admin-token"), "utf8").trim();

  browser = await launchChromium({ viewport: { width: 1366, height: 768 } });
  const page = await browser.context.newPage();
  await signIn(page, base, "admin", password);
  // The sign-in page itself, the user name typed (in a second browser: the first one has a sign-in session now).
  second = await launchChromium({ viewport: { width: 1366, height: 768 } });
  const signInPage = await second.context.newPage();
  await signInPage.goto(`${base}/console/`);
  await signInPage.waitForURL(/\/api\/auth\/oauth2\/sign-in/);
  await signInPage.getByLabel("User name").fill("admin");
  await picture(signInPage, "sign-in");

  // The measurement list: the vehicle's run, by name, receiving.
  await page.goto(`${base}/console/#/measurements?project=${project}`);
  const row = page.locator("tr", { has: page.locator(`a[href$="${measurement}"]`) });
  await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
  expect(await row.textContent()).toContain("Test track run");
  await picture(page, "measurements");

  // The run: on its dashboard (track, plots with units, values, logs), plotted live; then its track with the
  // position at the plot's cursor.
  await page.goto(`${base}/console/#/measurement/${project}/${measurement}`);
  const dashboard = page.getByRole("region", { name: "Dashboard", exact: true });
  const plot = page.getByRole("group", { name: "Panel Speed and engine", exact: true });
  await expect.poll(() => seriesPixels(page), { timeout: 60_000 }).toBeGreaterThan(100);
  expect(await dashboard.getByRole("button", { name: "● Live" }).count()).toBe(1);
  await expect
    .poll(() => plot.getByTestId("plot").getAttribute("data-axis-units"), { timeout: 30_000 })
    .toBe("km/h 1/min");
  for (const panel of ["Track", "Accelerations", "Values", "Events", "CAN"])
    expect(await dashboard.getByRole("group", { name: `Panel ${panel}`, exact: true }).count()).toBe(1);
  await expect
    .poll(() => dashboard.getByRole("group", { name: "Panel Events" }).locator("td.value").count(), { timeout: 30_000 })
    .toBeGreaterThan(0);
  await picture(page, "dashboard", [dashboard]);
  await picture(page, "measurement", [dashboard.locator(".card-head").first(), plot]);
  const map = page.getByRole("region", { name: "Map of gnss/position" });
  await expect.poll(() => map.getByTestId("map").count(), { timeout: 30_000 }).toBe(1);
  await expect
    .poll(
      async () => {
        // The mouse to the middle of the plot (by hand: a live page is never still enough for Playwright's hover).
        const box = await plot.locator(".u-over").evaluate((el) => {
          el.scrollIntoView({ block: "center" });
          const b = el.getBoundingClientRect();
          return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
        });
        await page.mouse.move(box.x, box.y);
        return map.getByTestId("map-position").textContent();
      },
      { timeout: 30_000 },
    )
    .toMatch(/^At the cursor: /);
  await picture(page, "map", [plot, map]);

  // Edges: the demo's edge connected and measuring.
  await page.goto(`${base}/console/#/edges`);
  await expect
    .poll(() => page.getByRole("table", { name: "Edges" }).locator(".badge.measuring").count(), { timeout: 30_000 })
    .toBeGreaterThan(0);
  await picture(page, "edges");

  // Organisation: a new user, the temporary password shown once; that user's first sign-in asks for a new one.
  await page.goto(`${base}/console/#/org`);
  await page.getByRole("form", { name: "New user" }).getByLabel("User name").fill("field-engineer");
  await page.getByRole("button", { name: "Create user" }).click();
  const secret = page.getByTestId("secret");
  await expect.poll(() => secret.count(), { timeout: 30_000 }).toBe(1);
  const temporary = (await secret.textContent())!;
  const users = page.getByRole("table", { name: "Users" });
  await expect
    .poll(() => users.getByRole("row").filter({ hasText: "field-engineer" }).count(), { timeout: 30_000 })
    .toBe(1);
  await picture(page, "organisation");
  await page.getByRole("button", { name: "I have copied it" }).click();
  await signInPage.getByLabel("User name").fill("field-engineer");
  await signInPage.getByLabel("Password").fill(temporary);
  await signInPage.getByRole("button", { name: "Sign in" }).click();
  await expect
    .poll(() => signInPage.getByRole("region", { name: "Choose a new password" }).count(), { timeout: 30_000 })
    .toBe(1);
  await picture(signInPage, "first-password");

  // Account: a new API token, shown once, that works.
  await page.goto(`${base}/console/#/account`);
  await page.getByLabel("Token name").fill("nightly export");
  await page.getByRole("button", { name: "Create token" }).click();
  await expect.poll(() => secret.count(), { timeout: 30_000 }).toBe(1);
  const apiToken = (await secret.textContent())!;
  expect((await fetch(`${base}/api/auth/users/me`, { headers: { "X-Intdash-Token": apiToken } })).status).toBe(200);
  await picture(page, "tokens");

  // OAuth2 clients: a new client, its secret shown once.
  await page.goto(`${base}/console/#/clients`);
  const form = page.getByRole("form", { name: "New OAuth2 client" });
  await form.getByLabel("Client name").fill("lab dashboard");
  await form.getByRole("button", { name: "Create client" }).click();
  await expect.poll(() => secret.count(), { timeout: 30_000 }).toBe(1);
  await picture(page, "clients");

  // On a tablet: the run's page fits the width.
  await page.setViewportSize({ width: 768, height: 1024 });
  await page.goto(`${base}/console/#/measurement/${project}/${measurement}`);
  await expect.poll(() => seriesPixels(page), { timeout: 60_000 }).toBeGreaterThan(100);
  expect(
    await page.evaluate(() => document.scrollingElement!.scrollWidth - document.scrollingElement!.clientWidth),
  ).toBe(0);
  await picture(page, "tablet");
  await page.setViewportSize({ width: 1366, height: 768 });

  // The run ended (over the REST API, as a team would end a run), then replayed at 10× with the last minute shown.
  // Long enough to replay 15 s of it (the steps above may take less on a quiet machine).
  const duration = async () =>
    (
      await (
        await fetch(`${base}/api/v1/projects/${project}/measurements/${measurement}`, {
          headers: { "X-Intdash-Token": token },
        })
      ).json()
    ).duration as number;
  await expect.poll(duration, { timeout: 60_000, interval: 1000 }).toBeGreaterThan(30_000_000);
  const end = await fetch(`${base}/api/v1/projects/${project}/measurements/${measurement}/end`, {
    method: "PUT",
    headers: { "X-Intdash-Token": token },
  });
  expect(end.status).toBe(200);
  await page.reload();
  const replay = page.getByRole("region", { name: "Replay" });
  await expect.poll(() => replay.count(), { timeout: 30_000 }).toBe(1);
  await dashboard.getByLabel("Time range").selectOption({ label: "Last 10 s" });
  await replay.getByLabel("Speed").selectOption({ label: "10×" });
  await replay.getByRole("button", { name: "Play replay" }).click();
  const at = async () => {
    const t = replay.getByTestId("replay-time");
    return Number(await t.getAttribute("data-at")) - Number(await t.getAttribute("data-start"));
  };
  await expect.poll(at, { timeout: 30_000 }).toBeGreaterThan(15);
  await replay.getByRole("button", { name: "Pause replay" }).click();
  await expect.poll(() => seriesPixels(page), { timeout: 30_000 }).toBeGreaterThan(100);
  await picture(page, "replay", [replay, plot]);

  // Signed out.
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect.poll(() => page.getByRole("status").textContent(), { timeout: 30_000 }).toContain("signed out");
  await picture(page, "signed-out");

  // The guide shows exactly these pictures, each small, and the repository holds exactly the guide's pictures.
  expect([...shownByGuide()].sort()).toEqual([...pictures.keys()].sort());
  for (const [name, png] of pictures) expect(png.length, name).toBeLessThan(MAX_BYTES);
  // (`npm run screenshots` makes them so after this run, from the pictures it took.)
  const inRepo = fs.readdirSync(IMAGES).filter((f) => f.startsWith("console-"));
  if (!process.env.CONSOLE_SCREENSHOTS) expect(inRepo.sort()).toEqual([...shownByGuide()].sort());
}, 400_000);
