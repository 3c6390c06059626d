// Replaying a recorded drive in Chromium and Firefox, on a laptop (1366 px) and a tablet (768 px): Play at 10×
// and at 1×, Pause, the timeline scrubbed from the keyboard; the play head drawn across the plot and the map's
// position following it; with "Last 10 s" the plot's range slides so that it ends at the play head.
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PASSWORD } from "../cloud/oauth/helpers.js";
import { DEFAULT_PROJECT, withPeer } from "../cloud/measurements/helpers.js";
import { BROWSERS, launchBrowser } from "../support/browser.js";
import { overflow, plotPixels, signIn } from "./helpers.js";
import { DRIVE_POINTS, recordDrive } from "./drive.js";

const VIEWPORTS = [
  { width: 1366, height: 768 },
  { width: 768, height: 1024 },
];
/** The play head's colour on the plot (MARKER_COLOR of the console's plot). */
const HEAD: [number, number, number] = [230, 0, 126];

/** The play head: seconds after the start of the measurement (NaN before the first play). */
async function headSeconds(page: Page): Promise<number> {
  const at = await page.getByTestId("replay-time").getAttribute("data-at");
  const start = Number(await page.getByTestId("replay-time").getAttribute("data-start"));
  return at ? Number(at) - start : Number.NaN;
}

describe("replay of a recorded measurement", () => {
  const ctx = withPeer();
  let m: string;
  beforeAll(async () => {
    m = await recordDrive(ctx.call);
  }, 120_000);

  for (const name of BROWSERS)
    for (const vp of VIEWPORTS)
      it(`plays, pauses and scrubs in ${name} at ${vp.width} px, the cursor and the range following`, async () => {
        const browser = await launchBrowser(name, { viewport: vp });
        try {
          const page = await browser.context.newPage();
          await signIn(page, ctx.peer.url, "admin", ADMIN_PASSWORD);
          await page.goto(`${ctx.peer.url}/console/#/measurement/${DEFAULT_PROJECT}/${m}`);
          const plot = page.getByTestId("plot");
          await expect
            .poll(async () => Number(await plot.getAttribute("data-points")), { timeout: 30_000 })
            .toBe(4 * DRIVE_POINTS);
          const bar = page.getByRole("region", { name: "Replay" });
          const marker = page.getByTestId("map-cursor");
          const latest = await marker.getAttribute("cx");
          expect((await plotPixels(page, HEAD)).count).toBe(0);

          // 10×: 20 s of the drive replayed in less than 20 s of the wall clock.
          await bar.getByLabel("Speed").selectOption({ label: "10×" });
          const t10 = Date.now();
          await bar.getByRole("button", { name: "Play replay" }).click();
          await expect.poll(() => headSeconds(page), { timeout: 30_000 }).toBeGreaterThan(20);
          expect(Date.now() - t10).toBeLessThan(20_000);
          await bar.getByRole("button", { name: "Pause replay" }).click();
          const paused = await headSeconds(page);
          // The head is drawn across the plot, and the map shows the position at the head, not the latest one.
          await expect.poll(async () => (await plotPixels(page, HEAD)).count, { timeout: 30_000 }).toBeGreaterThan(50);
          const x1 = (await plotPixels(page, HEAD)).meanX;
          await expect.poll(() => marker.getAttribute("cx"), { timeout: 30_000 }).not.toBe(latest);
          expect(await page.getByTestId("map-position").textContent()).toMatch(/^At the cursor: 3[45]\.\d{6}/);
          await page.waitForTimeout(500);
          expect(await headSeconds(page)).toBe(paused);

          // The timeline from the keyboard: back to the start, then to the end (the head at the plot's right).
          const timeline = bar.getByRole("slider", { name: "Replay position" });
          await timeline.focus();
          await page.keyboard.press("Home");
          await expect.poll(() => headSeconds(page), { timeout: 30_000 }).toBe(0);
          expect(await bar.getByTestId("replay-time").textContent()).toMatch(/^0\.00 s of 59\.9\d? s$/);
          await page.keyboard.press("End");
          await expect.poll(() => headSeconds(page), { timeout: 30_000 }).toBeGreaterThan(59.8);
          await expect.poll(async () => (await plotPixels(page, HEAD)).meanX, { timeout: 30_000 }).toBeGreaterThan(x1);

          // 1×, from the start (played to the end, Play starts again): never ahead of the wall clock.
          await bar.getByLabel("Speed").selectOption({ label: "1×" });
          const t1 = Date.now();
          await bar.getByRole("button", { name: "Play replay" }).click();
          await expect.poll(() => headSeconds(page), { timeout: 30_000 }).toBeGreaterThan(1);
          await bar.getByRole("button", { name: "Pause replay" }).click();
          const played = await headSeconds(page);
          expect(played * 1000).toBeLessThanOrEqual(Date.now() - t1 + 200);

          // "Last 10 s": the plot's range ends at the play head and moves with it.
          await page
            .getByRole("region", { name: "Dashboard", exact: true })
            .getByLabel("Time range")
            .selectOption({ label: "Last 10 s" });
          const range = async () => [
            Number(await plot.getAttribute("data-start")),
            Number(await plot.getAttribute("data-end")),
          ];
          const at = async () => Number(await bar.getByTestId("replay-time").getAttribute("data-at"));
          expect(await range()).toEqual([(await at()) - 10, await at()]);
          await bar.getByLabel("Speed").selectOption({ label: "10×" });
          await bar.getByRole("button", { name: "Play replay" }).click();
          await expect.poll(() => headSeconds(page), { timeout: 30_000 }).toBeGreaterThan(played + 15);
          await bar.getByRole("button", { name: "Pause replay" }).click();
          await expect.poll(range, { timeout: 30_000 }).toEqual([(await at()) - 10, await at()]);
          // Only the last 10 s of the drive's 60 s are on the plot (loaded a little wider: up to 20 s).
          await expect
            .poll(async () => Number(await plot.getAttribute("data-points")), { timeout: 30_000 })
            .toBeLessThan(4 * DRIVE_POINTS * 0.4);

          expect(await overflow(page)).toEqual({ by: 0, culprit: "" });
        } finally {
          await browser.close();
        }
      }, 240_000);
});
