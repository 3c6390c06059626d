// The map's view: a track fitted into the panel in Web Mercator (the projection of XYZ map tiles), and the tiles
// of the operator's tile service (GET /api/console/settings) that cover the view, when one is configured.
import { api } from "../api";

/** World coordinates at zoom 0 (0..256 across), as XYZ tiles address them. */
const TILE = 256;
const MAX_ZOOM = 19;
const worldX = (lon: number) => ((lon + 180) / 360) * TILE;
const worldY = (lat: number) => {
  const phi = (Math.max(-85.05, Math.min(85.05, lat)) * Math.PI) / 180;
  return ((1 - Math.asinh(Math.tan(phi)) / Math.PI) / 2) * TILE;
};

export interface View {
  x(lon: number): number;
  y(lat: number): number;
  /** Screen pixels per world unit: 2^zoom. */
  scale: number;
  center: [number, number];
}

/** The view that fits the positions into `w`×`h` pixels with `pad` around them. */
export function fitView(lat: number[], lon: number[], w: number, h: number, pad: number): View {
  const xs = lon.map(worldX);
  const ys = lat.map(worldY);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  // A track of one point (or a straight north-south one) still gets a finite zoom.
  const scale = Math.min((w - 2 * pad) / Math.max(x1 - x0, 1e-9), (h - 2 * pad) / Math.max(y1 - y0, 1e-9), 2 ** 18);
  const center: [number, number] = [(x0 + x1) / 2, (y0 + y1) / 2];
  return {
    x: (l) => w / 2 + (worldX(l) - center[0]) * scale,
    y: (l) => h / 2 + (worldY(l) - center[1]) * scale,
    scale,
    center,
  };
}

export interface Tile {
  href: string;
  x: number;
  y: number;
  size: number;
}

/** The tiles covering a `w`×`h` view, at the zoom nearest to the view's (scaled a little to fit it exactly). */
export function tilesFor(template: string, view: View, w: number, h: number): Tile[] {
  const z = Math.max(0, Math.min(MAX_ZOOM, Math.round(Math.log2(view.scale))));
  const n = 2 ** z;
  const size = (view.scale * TILE) / n;
  const toTile = (world: number) => Math.floor((world * n) / TILE);
  const [left, top] = [view.center[0] - w / 2 / view.scale, view.center[1] - h / 2 / view.scale];
  const [right, bottom] = [view.center[0] + w / 2 / view.scale, view.center[1] + h / 2 / view.scale];
  const tiles: Tile[] = [];
  for (let ty = Math.max(0, toTile(top)); ty <= Math.min(n - 1, toTile(bottom)); ty++)
    for (let tx = Math.max(0, toTile(left)); tx <= Math.min(n - 1, toTile(right)); tx++)
      tiles.push({
        href: template.replaceAll("{z}", String(z)).replaceAll("{x}", String(tx)).replaceAll("{y}", String(ty)),
        x: w / 2 + ((tx * TILE) / n - view.center[0]) * view.scale,
        y: h / 2 + ((ty * TILE) / n - view.center[1]) * view.scale,
        size,
      });
  return tiles;
}

export interface MapTiles {
  url: string;
  attribution: string;
}

let settings: Promise<MapTiles | null> | undefined;
/** The operator's map tiles (null: none configured), asked once per page load. */
export function mapTiles(): Promise<MapTiles | null> {
  settings ??= api<{ map_tiles: MapTiles | null }>("/console/settings").then(
    (s) => s.map_tiles,
    () => ((settings = undefined), null),
  );
  return settings;
}
