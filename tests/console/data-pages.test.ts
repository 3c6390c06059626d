// The console's data pages against a real peer whose agent streams the sample connector: each edge's
// data rate on the edges page, the running measurement in the list and its plot's live state, and the
// numeric fields of JSON data (json, and string holding JSON) listed and plotted together on one plot.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, type TestBrowser } from "../support/browser.js";
import { ADMIN_PASSWORD } from "../cloud/oauth/helpers.js";
import { caller } from "../cloud/accounts/helpers.js";
import { chunksMessage, createMeasurement, uploadProto, uuid, type TestPoint } from "../cloud/measurements/helpers.js";
import { until, type Stack } from "../e2e/stack.js";
import { hoverPlot, plottedPoints, seriesPixels, signIn, startSampleStack } from "./helpers.js";

const SECOND_SERIES: [number, number, number] = [209, 64, 31]; // #d1401f

describe("console data pages", () => {
  let s: Stack;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    s = await startSampleStack(200);
    await until(
      async () => (await s.measurements()).find((m) => m.status === "measuring" && m.received_data_points > 0),
      30_000,
      "a running measurement",
    );
    browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    page = await browser.context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
  }, 120_000);

  it("shows each connected edge's data rate from the broker", async () => {
    await signIn(page, s.peer.url, "admin", ADMIN_PASSWORD);
    await page.goto(`${s.peer.url}/console/#/edges`);
    const edges = page.getByRole("table", { name: "Edges" });
    const rate = edges.locator("tbody tr", { has: page.locator(".badge.connected") }).getByTestId("rate");
    await expect.poll(() => rate.count(), { timeout: 30_000 }).toBe(1);
    // The sample connector sends 200 counter points and 5 raw points per second (8 and 12 bytes).
    const pointsPerSecond = async () =>
      Number(
        /^([\d,]+) pt\/s, [\d.]+ (B|KiB)\/s$/.exec((await rate.textContent()) ?? "")?.[1]?.replace(/,/g, "") ?? "0",
      );
    await expect.poll(pointsPerSecond, { timeout: 30_000 }).toBeGreaterThan(100);
    expect(await pointsPerSecond()).toBeLessThan(400);
  }, 120_000);

  it("shows a running measurement as receiving, and its plot's live state as a pressed button, not a greyed one", async () => {
    await page.goto(`${s.peer.url}/console/#/measurements`);
    const running = page.getByRole("table", { name: "Measurements" }).locator('tr[data-status="measuring"]').first();
    await expect.poll(() => running.count(), { timeout: 30_000 }).toBe(1);
    expect(await running.locator("td.num").last().textContent()).toBe("receiving");
    expect(await running.getByRole("progressbar").count()).toBe(0);
    // The page shows no loading text once the console runs, and has an icon.
    expect(await page.getByText("Loading the console").count()).toBe(0);
    expect(await page.locator('link[rel="icon"]').count()).toBe(1);

    await running.getByRole("link").click();
    const toolbar = page.getByRole("region", { name: "Plot" });
    const live = toolbar.getByRole("button", { name: "● Live" });
    await expect.poll(() => live.count(), { timeout: 30_000 }).toBe(1);
    expect(await live.getAttribute("aria-pressed")).toBe("true");
    expect(await live.isEnabled()).toBe(true);
    await toolbar.getByRole("button", { name: "Zoom in" }).click();
    const follow = toolbar.getByRole("button", { name: "Follow live" });
    await expect.poll(() => follow.isEnabled(), { timeout: 30_000 }).toBe(true);
    await follow.click();
    await expect.poll(() => live.count(), { timeout: 30_000 }).toBe(1);
    // A relative range on a running measurement slides with it, live.
    await toolbar.getByLabel("Time range").selectOption({ label: "Last 10 s" });
    await expect.poll(() => toolbar.getByText("the window sliding").count(), { timeout: 30_000 }).toBe(1);
    expect(await page.getByTestId("plot").getAttribute("data-live")).toBe("true");
  }, 120_000);

  it("lists the numeric fields of JSON data and plots several on one plot", async () => {
    const call = caller(s.peer, s.cloud.token);
    const P = `/v1/projects/${s.cloud.projectUuid}`;
    const m = (await createMeasurement(call, {}, `${P}/measurements`)).uuid as string;
    const points: TestPoint[] = [];
    const json = (name: string, type: string, i: number, v: unknown) =>
      points.push({ name, type, elapsed: BigInt(i) * 10_000_000n, payload: Buffer.from(JSON.stringify(v)) });
    for (let i = 0; i < 500; i++) {
      json("imu", "json", i, { acc: { x: Math.sin(i / 20), y: Math.cos(i / 20) * 2 }, label: "ok" });
      json("gps", "string", i, { lat: 35 + i / 1000, fix: "3d" });
    }
    expect(
      (await uploadProto(call, chunksMessage(m, uuid(), [points]), `${P}/measurements/sequences/chunks`)).status,
    ).toBe(200);
    for (const step of ["end", "complete"])
      expect((await call(`${P}/measurements/${m}/${step}`, { method: "PUT" })).status).toBe(200);

    await page.goto(`${s.peer.url}/console/#/measurement/${s.cloud.projectUuid}/${m}`);
    for (const field of ["imu /acc/x", "imu /acc/y", "gps /lat"]) {
      await expect
        .poll(() => page.getByRole("checkbox", { name: `Plot ${field}` }).count(), { timeout: 30_000 })
        .toBe(1);
    }
    // Text fields are not offered.
    expect(await page.getByRole("checkbox", { name: /\/label|\/fix/ }).count()).toBe(0);
    await expect.poll(() => plottedPoints(page), { timeout: 30_000 }).toBe(1500);
    await expect.poll(() => seriesPixels(page), { timeout: 30_000 }).toBeGreaterThan(100);
    expect(await seriesPixels(page, SECOND_SERIES)).toBeGreaterThan(100);
    expect(await page.locator(".u-legend").textContent()).toContain("imu /acc/y");
    // Each series on its own scale: the first's axis on the left, the second's on the right (and the time axis).
    expect(await page.locator("[data-testid=plot] .u-axis").count()).toBe(3);
    // The cursor reads the time to the millisecond.
    const legendTime = async () => {
      await hoverPlot(page, 0.5);
      return page.locator(".u-legend .u-series").first().textContent();
    };
    await expect.poll(legendTime, { timeout: 30_000 }).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}/);
    // The JSON itself is still in a table.
    expect(await page.getByRole("table", { name: "Data of imu" }).locator("td.value").first().textContent()).toContain(
      '"acc"',
    );

    // Unticking a field takes it off the plot.
    await page.getByRole("checkbox", { name: "Plot imu /acc/x" }).uncheck();
    await expect.poll(() => plottedPoints(page), { timeout: 30_000 }).toBe(1000);
  }, 120_000);
});
