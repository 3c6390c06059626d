// Map tiles from a tile service the operator configures (--map-tiles-url), here a local HTTP server: in Chromium
// and Firefox, the tiles around the recorded lap are fetched and drawn under its track, with their attribution;
// the console's Content-Security-Policy allows that origin for images.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PASSWORD } from "../cloud/oauth/helpers.js";
import { DEFAULT_PROJECT, adminCall } from "../cloud/measurements/helpers.js";
import { startTestPeer, type TestPeer } from "../cloud/harness.js";
import { BROWSERS, launchBrowser } from "../support/browser.js";
import { startTileServer, type TileServer } from "../support/tile-server.js";
import { signIn } from "./helpers.js";
import { recordDrive } from "./drive.js";

/** The XYZ tile holding a position at zoom `z` (Web Mercator). */
function tileOf(lat: number, lon: number, z: number): [number, number] {
  const n = 2 ** z;
  const phi = (lat * Math.PI) / 180;
  return [
    Math.floor(((lon + 180) / 360) * n),
    Math.floor(((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * n),
  ];
}

describe("map tiles from the operator's tile service", () => {
  let tiles: TileServer;
  let peer: TestPeer;
  let m: string;
  beforeAll(async () => {
    tiles = await startTileServer();
    peer = await startTestPeer({ config: { mapTilesUrl: tiles.template, mapTilesAttribution: "© Test tiles" } });
    m = await recordDrive(await adminCall(peer));
  }, 120_000);
  afterAll(async () => {
    await peer?.stop();
    await tiles?.close();
  });

  it("allows the tile server's origin for the console's images", async () => {
    const csp = (await fetch(`${peer.url}/console/`)).headers.get("content-security-policy");
    expect(csp).toContain(`img-src 'self' data: blob: ${new URL(tiles.template.split("{")[0]!).origin}; `);
  });

  for (const name of BROWSERS)
    it(`draws the tiles around the track under it, with their attribution, in ${name}`, async () => {
      const browser = await launchBrowser(name, { viewport: { width: 1366, height: 900 } });
      try {
        tiles.requested.length = 0;
        const page = await browser.context.newPage();
        await signIn(page, peer.url, "admin", ADMIN_PASSWORD);
        await page.goto(`${peer.url}/console/#/measurement/${DEFAULT_PROJECT}/${m}`);
        const map = page.getByTestId("map");
        await expect.poll(() => map.count(), { timeout: 30_000 }).toBe(1);
        const shown = map.getByTestId("map-tile");
        await expect.poll(() => shown.count(), { timeout: 30_000 }).toBeGreaterThan(0);
        // Every tile loaded (the browser was allowed to fetch it and it decoded), and the track drawn above them.
        await expect
          .poll(() => map.locator("[data-testid=map-tile][data-loaded=true]").count(), { timeout: 30_000 })
          .toBe(await shown.count());
        expect(await map.locator("[data-testid=map-tile] ~ polyline").count()).toBe(1);
        expect(await page.getByTestId("map-attribution").textContent()).toBe("Map: © Test tiles");

        // The tiles asked for are those around the lap (35° N, 137° E), at a zoom that shows a 1.4 km lap.
        const zooms = new Set(tiles.requested.map(([z]) => z));
        expect(zooms.size).toBe(1);
        const [z] = [...zooms];
        expect(z).toBeGreaterThanOrEqual(14);
        expect(z).toBeLessThanOrEqual(17);
        const [x, y] = tileOf(35, 137, z!);
        expect(tiles.requested.map(([, tx, ty]) => `${tx}/${ty}`)).toContain(`${x}/${y}`);
      } finally {
        await browser.close();
      }
    }, 120_000);
});
