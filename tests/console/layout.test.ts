// The console's pages at a tablet's width (768×1024, portrait) and a laptop's (1366×768): nothing is
// wider than the window (no sideways scrolling), and every navigation link is on screen and works.
import { describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { ADMIN_PASSWORD } from "../cloud/oauth/helpers.js";
import { overflow, seriesPixels, signIn, withRunningSampleStack } from "./helpers.js";

const VIEWPORTS = [
  { name: "tablet", width: 768, height: 1024 },
  { name: "laptop", width: 1366, height: 768 },
];
const NAV = ["Measurements", "Edges", "Organisation", "Account"];

describe("console layout on a tablet and a laptop", () => {
  const ctx = withRunningSampleStack();

  for (const vp of VIEWPORTS) {
    it(`fits ${vp.width}×${vp.height} (${vp.name}) without sideways scrolling, the navigation on screen`, async () => {
      const browser = await launchChromium({ viewport: { width: vp.width, height: vp.height } });
      try {
        const page = await browser.context.newPage();
        const { s, measurement } = ctx;
        await signIn(page, s.peer.url, "admin", ADMIN_PASSWORD);
        const pages: [string, () => Promise<unknown>][] = [
          [
            `#/measurements?project=${s.cloud.projectUuid}`,
            () => expect.poll(() => page.locator(`a[href$="${measurement}"]`).count(), { timeout: 30_000 }).toBe(1),
          ],
          [
            `#/measurement/${s.cloud.projectUuid}/${measurement}`,
            () => expect.poll(() => seriesPixels(page), { timeout: 30_000 }).toBeGreaterThan(100),
          ],
          ["#/edges", () => expect.poll(() => page.getByTestId("rate").count(), { timeout: 30_000 }).toBe(1)],
          [
            "#/org",
            () =>
              expect
                .poll(() => page.getByRole("table", { name: "Users" }).locator("tbody tr").count(), { timeout: 30_000 })
                .toBeGreaterThan(0),
          ],
          [
            "#/account",
            () =>
              expect
                .poll(() => page.getByRole("button", { name: "Create token" }).count(), { timeout: 30_000 })
                .toBe(1),
          ],
        ];
        for (const [hash, loaded] of pages) {
          await page.goto(`${s.peer.url}/console/${hash}`);
          await loaded();
          expect(await overflow(page), `${hash} at ${vp.width}px`).toEqual({ by: 0, culprit: "" });
          for (const name of NAV) {
            const box = await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name }).boundingBox();
            expect(box, `${name} link on ${hash}`).not.toBeNull();
            expect(box!.x).toBeGreaterThanOrEqual(0);
            expect(box!.x + box!.width).toBeLessThanOrEqual(vp.width);
            expect(box!.y).toBeGreaterThanOrEqual(0);
          }
        }
        // The navigation works from the keyboard too.
        await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Edges" }).focus();
        await page.keyboard.press("Enter");
        await page.waitForURL(/#\/edges$/);
      } finally {
        await browser.close();
      }
    }, 240_000);
  }
});
