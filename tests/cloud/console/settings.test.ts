// The console's settings: the map tiles' URL template checked at start (a clear error naming the setting), and
// GET /api/console/settings answering them to signed-in users only (null when none is configured).
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../cloud/config.js";
import { startPeerWithAdmin } from "../accounts/helpers.js";
import { startTestPeer } from "../harness.js";

const errorOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  return "";
};

describe("map tiles setting", () => {
  it("takes an http(s) URL template with {z}, {x} and {y}, from a flag or the environment", () => {
    const url = "https://tiles.example.com/{z}/{x}/{y}.png?key=abc";
    expect(loadConfig({ mapTilesUrl: url, mapTilesAttribution: "© Example" }, {})).toMatchObject({
      mapTilesUrl: url,
      mapTilesAttribution: "© Example",
    });
    expect(loadConfig({}, { CLOUD_MAP_TILES_URL: "http://10.0.0.5:8090/{z}/{y}/{x}" }).mapTilesUrl).toBe(
      "http://10.0.0.5:8090/{z}/{y}/{x}",
    );
    expect(loadConfig({}, {}).mapTilesUrl).toBeUndefined();
  });

  it("refuses a template without a placeholder, another scheme, or credentials in the URL", () => {
    expect(errorOf(() => loadConfig({ mapTilesUrl: "https://t.example.com/{z}/{x}.png" }, {}))).toBe(
      'invalid --map-tiles-url "https://t.example.com/{z}/{x}.png": expected an http(s) URL with {z}, {x} and {y} (missing {y})',
    );
    expect(errorOf(() => loadConfig({}, { CLOUD_MAP_TILES_URL: "ftp://t.example.com/{z}/{x}/{y}" }))).toBe(
      'invalid CLOUD_MAP_TILES_URL "ftp://t.example.com/{z}/{x}/{y}": expected an http: or https: URL',
    );
    expect(errorOf(() => loadConfig({ mapTilesUrl: "tiles/{z}/{x}/{y}" }, {}))).toContain(
      "expected an http(s) URL with {z}, {x} and {y}",
    );
    expect(errorOf(() => loadConfig({ mapTilesUrl: "https://u:p@t.example.com/{z}/{x}/{y}" }, {}))).toContain(
      "expected a URL without a user name or password",
    );
  });
});

describe("GET /api/console/settings", () => {
  it("answers null map tiles when none is configured, to signed-in users only; the console allows images of its own origin only", async () => {
    const { peer, admin } = await startPeerWithAdmin();
    try {
      expect((await peer.api("/console/settings")).status).toBe(401);
      const r = await admin("/console/settings");
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ map_tiles: null });
      const page = await fetch(`${peer.url}/console/`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toContain("img-src 'self' data: blob:; ");
    } finally {
      await peer.stop();
    }
  });
});

describe("the console's Content-Security-Policy", () => {
  it("names each peer's own map tiles' origin, whatever another peer of the same process was started with", async () => {
    const csp = async (url: string) => (await fetch(`${url}/console/`)).headers.get("content-security-policy");
    const plain = await startTestPeer();
    const withTiles = await startTestPeer({ config: { mapTilesUrl: "http://tiles.example.com:8090/{z}/{x}/{y}.png" } });
    try {
      expect(await csp(plain.url)).toContain("img-src 'self' data: blob:; ");
      expect(await csp(withTiles.url)).toContain("img-src 'self' data: blob: http://tiles.example.com:8090; ");
      expect(await csp(plain.url)).toContain("img-src 'self' data: blob:; ");
    } finally {
      await Promise.all([plain.stop(), withTiles.stop()]);
    }
  });
});
