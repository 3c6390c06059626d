// Dashboards in Chromium and Firefox, on a laptop (1366 px) and a tablet (768 px): a recorded vehicle run opens on
// the automatic dashboard; a unit and display name given to a series show on the plot's legend and axis and in
// tables; panels are added, removed, resized and their series chosen; the dashboard is saved, made the default of
// the edge, and the edge's next measurement opens on it.
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PASSWORD } from "../cloud/oauth/helpers.js";
import { DEFAULT_PROJECT, uuid, withPeer } from "../cloud/measurements/helpers.js";
import { BROWSERS, launchBrowser, type TestBrowser } from "../support/browser.js";
import { signIn } from "./helpers.js";
import { recordVehicleRun } from "./vehicle-drive.js";

const WIDTHS = [1366, 768] as const;
const T = { timeout: 30_000 };

const panels = (page: Page) => page.getByRole("group", { name: /^Panel / });
const panel = (page: Page, title: RegExp) => page.getByRole("group", { name: title });
const dashboardPicker = (page: Page) => page.getByRole("combobox", { name: "Dashboard", exact: true });
const pickedName = (page: Page) => dashboardPicker(page).evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.text);
const widthOf = async (l: Locator) => (await l.boundingBox())?.width ?? 0;

describe.each(BROWSERS.flatMap((b) => WIDTHS.map((w) => [b, w] as const)))(
  "dashboards in %s at %i px",
  (name, width) => {
    const ctx = withPeer();
    const edge = uuid();
    const dashboardName = `Vehicle ${name} ${width}`;
    let browser: TestBrowser;
    let page: Page;
    let first: string;
    let second: string;
    const open = (m: string) => page.goto(`${ctx.peer.url}/console/#/measurement/${DEFAULT_PROJECT}/${m}`);

    beforeAll(async () => {
      first = await recordVehicleRun(ctx.call, edge);
      second = await recordVehicleRun(ctx.call, edge, 10);
      browser = await launchBrowser(name, { viewport: { width, height: 900 } });
      page = await browser.context.newPage();
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
    });

    it("opens a measurement on the automatic dashboard: a plot, a map and logs", async () => {
      await signIn(page, ctx.peer.url, "admin", ADMIN_PASSWORD);
      await open(first);
      await expect.poll(() => panels(page).count(), T).toBe(5); // plot, map, and logs of position, CAN and events
      expect(await pickedName(page)).toBe("Automatic");
      await expect.poll(() => page.getByTestId("map").count(), T).toBe(1);
      await expect
        .poll(async () => Number(await page.getByTestId("plot").getAttribute("data-points")), T)
        .toBeGreaterThan(1000);
      expect(
        await panel(page, /^Panel Log: log\/event/)
          .getByRole("table")
          .locator("td.value")
          .first()
          .textContent(),
      ).toMatch(/^gear 1 → 2/);
    }, 120_000);

    it("gives a series a display name and a unit, shown on the plot's legend and axis", async () => {
      const ids = page.getByRole("table", { name: "Data IDs" });
      await ids.getByRole("button", { name: "Edit vehicle/speed" }).click();
      await ids.getByLabel("Display name of vehicle/speed").fill("Speed");
      await ids.getByLabel("Unit of vehicle/speed").fill("km/h");
      await ids.getByRole("button", { name: "Save" }).click();
      const row = ids.getByRole("row").filter({ hasText: "vehicle/speed" });
      await expect
        .poll(() => row.getByRole("cell").allTextContents(), T)
        .toEqual(["vehicle/speed", "Speed", "km/h", "float64", "Edit"]);
      const plot = panel(page, /^Panel Plot: /);
      await expect.poll(() => plot.locator(".u-legend").textContent(), T).toContain("Speed (km/h)");
      expect(await plot.getByRole("img").getAttribute("aria-label")).toContain("Speed (km/h)");
    }, 120_000);

    it("removes, adds, fills and resizes panels", async () => {
      await panel(page, /^Panel Log: can\/0x1A0/)
        .getByRole("button", { name: /^Remove/ })
        .click();
      await expect.poll(() => panels(page).count(), T).toBe(4);
      expect(await page.getByTestId("dashboard-state").textContent()).toBe("Unsaved changes");

      await page.getByRole("combobox", { name: "New panel" }).selectOption({ label: "Table of values" });
      await page.getByRole("button", { name: "Add panel" }).click();
      const table = panel(page, /^Panel Table of values/);
      await expect.poll(() => table.count(), T).toBe(1);
      await table.getByText("Series (0)").click();
      await table.getByRole("checkbox", { name: "Show vehicle/speed" }).check();
      await table.getByRole("checkbox", { name: "Show engine/coolant_temp" }).check();
      await page.keyboard.press("Escape"); // closes the list of series
      const values = panel(page, /^Panel Table of values: Speed, engine\/coolant_temp$/).getByRole("table");
      await expect
        .poll(() => values.getByRole("row").filter({ hasText: "Speed" }).getByRole("cell").last().textContent(), T)
        .toBe("km/h");
      await expect
        .poll(async () => Number((await values.getByTestId("value").first().textContent())?.replace(/,/g, "")), T)
        .toBeGreaterThan(20);

      // A plot of the speed alone: its axis carries the unit.
      await page.getByRole("combobox", { name: "New panel" }).selectOption({ label: "Plot" });
      await page.getByRole("button", { name: "Add panel" }).click();
      const speed = panel(page, /^Panel Plot$/);
      await speed.getByText("Series (0)").click();
      await speed.getByRole("checkbox", { name: "Plot vehicle/speed" }).check();
      await page.keyboard.press("Escape");
      const speedPlot = panel(page, /^Panel Plot: Speed$/).getByTestId("plot");
      await expect.poll(() => speedPlot.getAttribute("data-axis-units"), T).toBe("km/h");
      await expect.poll(async () => Number(await speedPlot.getAttribute("data-points")), T).toBe(1001); // 20 s at 50 Hz, both ends
      await expect.poll(() => panels(page).count(), T).toBe(6);

      // The automatic plot: half the width (on a laptop; a tablet shows every panel full width) and taller.
      const plot = panel(page, /^Panel Plot: .*, /);
      const grid = page.locator(".panels");
      const fullWidth = await widthOf(plot);
      const canvasHeight = async () => (await plot.locator("canvas").boundingBox())?.height ?? 0;
      const before = await canvasHeight();
      await plot.getByRole("combobox", { name: /^Width of/ }).selectOption({ label: "Half" });
      await plot.getByRole("combobox", { name: /^Height of/ }).selectOption({ label: "Large" });
      await expect.poll(canvasHeight, T).toBeGreaterThan(before + 100);
      if (width >= 1000) {
        await expect.poll(() => widthOf(plot), T).toBeLessThan((await widthOf(grid)) * 0.55);
      } else {
        expect(Math.abs((await widthOf(plot)) - fullWidth)).toBeLessThan(2);
      }
      expect(await plot.getAttribute("data-width")).toBe("6");
      // Nothing sticks out sideways.
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    }, 120_000);

    it("saves the dashboard, makes it the edge's default, and the edge's next measurement opens on it", async () => {
      await page.getByRole("button", { name: "Save as new dashboard" }).click();
      const form = page.getByRole("form", { name: "Save dashboard" });
      await form.getByLabel("Dashboard name").fill(dashboardName);
      await form.getByRole("button", { name: "Save dashboard" }).click();
      await expect.poll(() => pickedName(page), T).toBe(dashboardName);
      expect(await page.getByTestId("dashboard-state").textContent()).toBe("Saved");
      const isDefault = page.getByLabel("Open this edge's measurements on it");
      await isDefault.click();
      await expect.poll(() => isDefault.isChecked(), T).toBe(true);
      await expect.poll(() => isDefault.isEnabled(), T).toBe(true);

      for (const m of [second, first]) {
        await open(m);
        await page.reload();
        await expect.poll(() => pickedName(page), T).toBe(dashboardName);
        await expect.poll(() => panels(page).count(), T).toBe(6);
        expect(await panel(page, /^Panel Log: can\/0x1A0/).count()).toBe(0);
        expect(await panel(page, /^Panel Plot: .*, /).getAttribute("data-width")).toBe("6");
        expect(await panel(page, /^Panel Plot: .*, /).getAttribute("data-height")).toBe("520");
        await expect
          .poll(
            () =>
              panel(page, /^Panel Plot: Speed$/)
                .getByTestId("plot")
                .getAttribute("data-axis-units"),
            T,
          )
          .toBe("km/h");
        await expect
          .poll(
            () =>
              panel(page, /^Panel Table of values/)
                .getByRole("cell", { name: "Speed", exact: true })
                .count(),
            T,
          )
          .toBe(1);
      }
      // A change to a saved dashboard is saved over it.
      await panel(page, /^Panel Table of values/)
        .getByRole("button", { name: /^Remove/ })
        .click();
      await page.getByRole("button", { name: "Save", exact: true }).click();
      await expect.poll(() => page.getByTestId("dashboard-state").textContent(), T).toBe("Saved");
      await page.reload();
      await expect.poll(() => pickedName(page), T).toBe(dashboardName);
      await expect.poll(() => panels(page).count(), T).toBe(5);
      expect(await panel(page, /^Panel Table of values/).count()).toBe(0);
    }, 120_000);
  },
);
