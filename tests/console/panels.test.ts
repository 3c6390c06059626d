// A recorded drive in the console: positions drawn as a track whose marker follows the plot's cursor, log lines
// searched, and a string series of binary data shown as hex rather than as control characters.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PASSWORD } from "../cloud/oauth/helpers.js";
import { DEFAULT_PROJECT, withPeer } from "../cloud/measurements/helpers.js";
import { launchChromium, type TestBrowser } from "../support/browser.js";
import { hoverPlot, signIn } from "./helpers.js";
import { recordDrive } from "./drive.js";

describe("console panels of a recorded drive", () => {
  const ctx = withPeer();
  let browser: TestBrowser;
  let page: Page;
  let m: string;

  beforeAll(async () => {
    m = await recordDrive(ctx.call);
    browser = await launchChromium({ viewport: { width: 1366, height: 900 } });
    page = await browser.context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("draws the positions as a track, its marker at the plot's cursor", async () => {
    await signIn(page, ctx.peer.url, "admin", ADMIN_PASSWORD);
    await page.goto(`${ctx.peer.url}/console/#/measurement/${DEFAULT_PROJECT}/${m}`);
    const map = page.getByTestId("map");
    await expect.poll(() => map.count(), { timeout: 30_000 }).toBe(1);
    expect(Number(await map.getAttribute("data-points"))).toBeGreaterThan(100);
    // No tile service configured: the track alone, and nothing asked of any other server.
    expect(await map.getByTestId("map-tile").count()).toBe(0);
    const position = page.getByTestId("map-position");
    expect(await position.textContent()).toMatch(/^Latest position: 3[45]\.\d{6}, 13[67]\.\d{6}$/);
    const marker = page.getByTestId("map-cursor");
    const latest = await marker.getAttribute("cx");

    // The cursor at the first quarter of the plot (once every series is on it): the lap's first quarter, far
    // from its end.
    await expect
      .poll(async () => Number(await page.getByTestId("plot").getAttribute("data-points")), { timeout: 30_000 })
      .toBe(2400);
    const atCursor = async () => {
      await hoverPlot(page, 0.25);
      return position.textContent();
    };
    await expect.poll(atCursor, { timeout: 30_000 }).toMatch(/^At the cursor: /);
    await expect.poll(() => marker.getAttribute("cx"), { timeout: 30_000 }).not.toBe(latest);
  }, 120_000);

  it("shows the last seconds of the measurement, and the whole of it again", async () => {
    const plot = page.getByTestId("plot");
    const points = async () => Number(await plot.getAttribute("data-points"));
    await expect.poll(points, { timeout: 30_000 }).toBe(2400); // speed, lat, lon and alt: 600 each
    const range = page.getByRole("region", { name: "Plot" }).getByLabel("Time range");
    await range.selectOption({ label: "Last 10 s" });
    // 10 s of a 60 s drive at 10 Hz: about 100 points a series.
    await expect.poll(points, { timeout: 30_000 }).toBeLessThan(500);
    expect(await points()).toBeGreaterThan(300);
    await expect
      .poll(async () => Number(await page.getByTestId("map").getAttribute("data-points")), { timeout: 30_000 })
      .toBeLessThan(120);
    await range.selectOption({ label: "Whole measurement" });
    await expect.poll(points, { timeout: 30_000 }).toBe(2400);
  }, 120_000);

  it("searches the log lines", async () => {
    const log = page.getByRole("region", { name: "log/event (string)" });
    await expect.poll(() => log.locator("td.value").count(), { timeout: 30_000 }).toBe(10);
    await log.getByRole("searchbox").fill("half way");
    await expect.poll(() => log.locator("td.value").allTextContents(), { timeout: 30_000 }).toEqual(["lap 1 half way"]);
    expect(await log.getByText("1 of 10 points match").count()).toBe(1);
  });

  it("shows a string of binary data as hex", async () => {
    const raw = page.getByRole("table", { name: "Data of raw/serial" });
    await expect.poll(() => raw.locator("td.value").first().textContent(), { timeout: 30_000 }).toBe("00 01 fe 41");
  });

  it("renames the measurement, and the list shows it by that name", async () => {
    await page.getByRole("button", { name: "Rename" }).click();
    const form = page.getByRole("form", { name: "Rename measurement" });
    await form.getByLabel("Name").fill("Lap test, dry track");
    await form.getByRole("button", { name: "Save" }).click();
    await expect
      .poll(() => page.getByRole("heading", { level: 2 }).first().textContent(), { timeout: 30_000 })
      .toBe("Measurement Lap test, dry track");
    await page.goto(`${ctx.peer.url}/console/#/measurements?project=${DEFAULT_PROJECT}`);
    await expect
      .poll(
        () =>
          page.getByRole("table", { name: "Measurements" }).getByRole("link", { name: "Lap test, dry track" }).count(),
        { timeout: 30_000 },
      )
      .toBe(1);
  });
});
