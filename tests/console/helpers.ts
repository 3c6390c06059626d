// The console's browser tests: a connected stack whose agent streams the sample connector (an int64
// counter) or a bare peer, Chromium signing in through the peer's sign-in page, and what the pages draw.
// (The guide's pictures are taken from the demo by tests/docs/console-guide.test.ts.)
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import type { Page } from "playwright-core";
import { addRtUpstream, startConnectedStack, until, type Stack } from "../e2e/stack.js";
import { startTestPeer, type TestPeer } from "../cloud/harness.js";
import { adminCall, type Call } from "../cloud/measurements/helpers.js";
import { launchChromium, type TestBrowser } from "../support/browser.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** The agent launches the compiled sample connector on its own FIFO with these arguments. */
function sampleConnector(s: Stack, id: string, args: string[]) {
  return s.put("/device-connectors/upstream", {
    id,
    format: "iscp-v2-compat",
    dest_ids: ["rt"],
    data_name_prefix: "sample/",
    ipc: { type: "fifo", path: s.fifo(id) },
    launch: {
      command: process.execPath,
      args: [path.join(ROOT, "dist/runtime/connectors/sample-connector.js"), "--path", "${ipc.path}", ...args],
      working_dir: ROOT,
    },
  });
}

/** A stack streaming `sample/counter` (int64, big-endian, counting up) at `rate` points per second, and a few `sample/raw` bytes. */
export function startSampleStack(rate = 200): Promise<Stack> {
  return startConnectedStack({}, async (s) => {
    await addRtUpstream(s);
    await sampleConnector(s, "sample", ["--name", "counter", "--type", "int64", "--size", "8", "--rate", String(rate)]);
    await sampleConnector(s, "raw", ["--name", "raw", "--type", "bytes", "--size", "12", "--rate", "5"]);
  });
}

/** For a describe block: a sample stack started before its tests (with its measurement running) and closed after. */
export function withRunningSampleStack(rate = 200): { s: Stack; measurement: string } {
  const ctx = {} as { s: Stack; measurement: string };
  beforeAll(async () => {
    ctx.s = await startSampleStack(rate);
    ctx.measurement = (
      await until(
        async () => (await ctx.s.measurements()).find((m) => m.status === "measuring" && m.received_data_points > 0),
        30_000,
        "a running measurement",
      )
    ).uuid;
  }, 120_000);
  afterAll(async () => {
    await ctx.s?.close();
  }, 120_000);
  return ctx;
}

/** Opens the console, signs in on the peer's sign-in page, and waits until the console shows the user. */
export async function signIn(page: Page, baseUrl: string, user: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await page.waitForURL(/\/api\/auth\/oauth2\/sign-in/);
  await page.getByLabel("User name").fill(user);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/console\/(#.*)?$/);
  await expect.poll(() => page.getByTestId("who").textContent(), { timeout: 30_000 }).toBe(user);
}

/** Pixels of the plot's canvas drawn in a series' colour (the first series' #1f6fd1 unless told), i.e. the line itself. */
export async function seriesPixels(page: Page, rgb: [number, number, number] = [31, 111, 209]): Promise<number> {
  return (await plotPixels(page, rgb)).count;
}

/** How many pixels of the plot's canvas are in a colour, and their mean x (canvas pixels; NaN when none). */
export function plotPixels(page: Page, rgb: [number, number, number]): Promise<{ count: number; meanX: number }> {
  return page.evaluate(([r, g, b]) => {
    const canvas = document.querySelector<HTMLCanvasElement>("[data-testid=plot] canvas");
    if (!canvas) return { count: 0, meanX: Number.NaN };
    const { data } = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    let sumX = 0;
    for (let i = 0; i < data.length; i += 4)
      if (
        Math.abs(data[i]! - r) < 40 &&
        Math.abs(data[i + 1]! - g) < 40 &&
        Math.abs(data[i + 2]! - b) < 40 &&
        data[i + 3]! > 100
      )
        n++, (sumX += (i / 4) % canvas.width);
    return { count: n, meanX: sumX / n };
  }, rgb);
}

/** How many points the plotted series hold (the reduced series' point counts, as the page shows them). */
export async function plottedPoints(page: Page): Promise<number> {
  return Number((await page.getByTestId("plot").getAttribute("data-points")) ?? "0");
}

/** For a describe block: a cloud peer, an admin API caller and a Chromium page, started before its tests and closed after. */
export function withPeerAndBrowser(): { peer: TestPeer; call: Call; browser: TestBrowser; page: Page } {
  const ctx = {} as { peer: TestPeer; call: Call; browser: TestBrowser; page: Page };
  beforeAll(async () => {
    ctx.peer = await startTestPeer();
    ctx.call = await adminCall(ctx.peer);
    ctx.browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    ctx.page = await ctx.browser.context.newPage();
  }, 120_000);
  afterAll(async () => {
    await ctx.browser?.close();
    await ctx.peer?.stop();
  }, 120_000);
  return ctx;
}

/** Moves the mouse onto the plot at `fraction` of its width (measured at the moment: panels above it may still be loading). */
export async function hoverPlot(page: Page, fraction: number): Promise<void> {
  const over = page.locator("[data-testid=plot] .u-over");
  const box = (await over.boundingBox())!;
  await over.hover({ position: { x: box.width * fraction, y: box.height / 2 } });
}

/** How far the page is wider than the window (0 when it fits), and the widest element that sticks out (the window
 * without its vertical scroll bar: Firefox's takes room, Chromium's headless one does not). */
export function overflow(page: Page): Promise<{ by: number; culprit: string }> {
  return page.evaluate(() => {
    const root = document.scrollingElement!;
    let culprit = "";
    const width = root.clientWidth;
    let right = width;
    for (const el of Array.from(document.querySelectorAll("body *"))) {
      const r = el.getBoundingClientRect();
      if (r.right > right + 0.5) (right = r.right), (culprit = `${el.tagName.toLowerCase()}.${el.className}`);
    }
    return { by: root.scrollWidth - width, culprit };
  });
}
