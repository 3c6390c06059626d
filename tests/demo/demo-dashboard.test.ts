// The demo as a visitor opens it: the vehicle's run, from the link the demo prints, opens in the console on the
// demo's dashboard: the track on a map, speeds and accelerations plotted with their units, values and logs.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { launchChromium, type TestBrowser } from "../support/browser.js";
import { freePort } from "../support/nats.js";
import { signIn } from "../console/helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const data = fs.mkdtempSync(path.join(os.tmpdir(), "demo-dashboard-"));
const T = { timeout: 60_000 };
let child: ChildProcess | undefined;
let browser: TestBrowser | undefined;

afterAll(async () => {
  await browser?.close();
  if (child?.exitCode === null) {
    const gone = new Promise((r) => child!.once("exit", r));
    child.kill("SIGINT");
    await gone;
  }
  fs.rmSync(data, { recursive: true, force: true });
}, 120_000);

it("opens the vehicle's run on its dashboard: map, plots with units, values and logs", async () => {
  const listen = `127.0.0.1:${await freePort()}`;
  child = spawn(process.execPath, ["dist/bin/demo.js"], {
    cwd: ROOT,
    env: { ...process.env, DEMO_DATA: data, CLOUD_LISTEN: listen },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let banner = "";
  child.stdout!.on("data", (c: Buffer) => (banner += c.toString()));
  await expect.poll(() => banner, T).toContain("Ctrl-C stops everything.");
  const run = /the vehicle's run\s+(http\S+)/.exec(banner)![1]!;

  browser = await launchChromium({ viewport: { width: 1366, height: 900 } });
  const page = await browser.context.newPage();
  const password = fs.readFileSync(path.join(data, "admin-password"), "utf8").trim();
  await signIn(page, `http://${listen}`, "admin", password);
  await page.goto(run);

  const picked = page.getByRole("combobox", { name: "Dashboard", exact: true });
  await expect.poll(() => picked.evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.text), T).toBe("Vehicle");
  const panel = (name: string) => page.getByRole("group", { name: `Panel ${name}`, exact: true });
  for (const name of ["Track", "Speed and engine", "Accelerations", "Values", "Events", "CAN"])
    await expect.poll(() => panel(name).count(), T).toBe(1);

  await expect
    .poll(async () => Number(await panel("Track").getByTestId("map").getAttribute("data-points")), T)
    .toBeGreaterThan(1);
  const speed = panel("Speed and engine");
  await expect
    .poll(async () => Number(await speed.getByTestId("plot").getAttribute("data-points")), T)
    .toBeGreaterThan(10);
  // The units and names come with the data IDs' labels, which load on their own (the data may come first); each
  // panel loads on its own too (the accelerations may arrive after the speeds).
  await expect.poll(() => speed.getByTestId("plot").getAttribute("data-axis-units"), T).toBe("km/h 1/min");
  await expect.poll(() => speed.locator(".u-legend").textContent(), T).toContain("Speed (km/h)");
  await expect
    .poll(() => panel("Accelerations").getByTestId("plot").getAttribute("data-axis-units"), T)
    .toBe("m/s² m/s²");
  await expect
    .poll(
      () =>
        panel("Values")
          .getByRole("row")
          .filter({ hasText: "Coolant temperature" })
          .getByRole("cell")
          .last()
          .textContent(),
      T,
    )
    .toBe("°C");
  // The log fills as the vehicle changes gear; the CAN frame is hex.
  await expect.poll(() => panel("Events").locator("td.value").first().textContent(), T).toMatch(/^gear 1 → 2/);
  await expect
    .poll(() => panel("CAN").locator("td.value").first().textContent(), T)
    .toMatch(/^([0-9a-f]{2} ){7}[0-9a-f]{2}$/);
}, 180_000);
