// A measurement's track: the positions of a data ID with latitude and longitude fields (JSON, as a GNSS
// receiver's connector sends them), drawn as a line in Web Mercator, with the position at the plot's cursor (or
// the latest one while nothing is pointed at). Under it, the map tiles of the operator's tile service when one is
// configured (--map-tiles-url); without one, the track alone: a self-hosted peer may have no internet.
import { Section, ErrorNote } from "../common";
import { useLoad } from "../hooks";
import type { Plottable } from "./json-fields";
import { bucketMiddles, fetchReduced } from "./reduced";
import { fitView, mapTiles, tilesFor } from "./map-view";

export interface PositionSource {
  data_type: string;
  data_id: string;
  lat: string;
  lon: string;
}

const LAT = new Set(["/lat", "/latitude"]);
const LON = new Set(["/lon", "/lng", "/longitude"]);

/** The data IDs whose numeric fields include a latitude and a longitude. */
export function positionSources(fields: Plottable[]): PositionSource[] {
  const byId = new Map<string, Partial<PositionSource> & { data_type: string; data_id: string }>();
  for (const f of fields) {
    if (f.field === undefined) continue;
    const key = `${f.data_type}:${f.data_id}`;
    const s = byId.get(key) ?? { data_type: f.data_type, data_id: f.data_id };
    if (LAT.has(f.field)) s.lat ??= f.field;
    if (LON.has(f.field)) s.lon ??= f.field;
    byId.set(key, s);
  }
  return [...byId.values()].filter((s): s is PositionSource => s.lat !== undefined && s.lon !== undefined);
}

interface Track {
  times: number[];
  lat: number[];
  lon: number[];
}

const W = 640;
const H = 360;
const PAD = 16;

/** Index of the last time at or before `t` (the first when `t` is before them all). */
function indexAt(times: number[], t: number): number {
  let lo = 0;
  let hi = times.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (times[mid]! <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function MapPanel({
  project,
  uuid,
  source,
  window,
  refresh,
  cursor,
}: {
  project: string;
  uuid: string;
  source: PositionSource;
  window?: [number, number];
  refresh: number;
  cursor?: number;
}) {
  const track = useLoad<Track>(async () => {
    const [lat, lon] = await Promise.all(
      [source.lat, source.lon].map((field) =>
        fetchReduced(project, uuid, { data_type: source.data_type, data_id: source.data_id, field }, 1000, window).then(
          bucketMiddles,
        ),
      ),
    );
    // The two fields come from the same points, so their buckets are the same ones.
    const n = Math.min(lat!.values.length, lon!.values.length);
    return { times: lat!.times.slice(0, n), lat: lat!.values.slice(0, n), lon: lon!.values.slice(0, n) };
  }, [project, uuid, source.data_id, window?.[0], window?.[1], refresh]);
  const tiles = useLoad(mapTiles, []);
  const t = track.data;
  const title = `Map of ${source.data_id}`;
  if (!t || t.times.length === 0)
    return (
      <Section title={title}>
        <ErrorNote error={track.error} />
        {t && <p class="hint">No positions yet.</p>}
      </Section>
    );

  const view = fitView(t.lat, t.lon, W, H, PAD);
  const { x, y } = view;
  const provider = tiles.data;
  const points = t.lat.map((la, i) => `${x(t.lon[i]!).toFixed(1)},${y(la).toFixed(1)}`).join(" ");
  const at = cursor === undefined ? t.times.length - 1 : indexAt(t.times, cursor);
  const here = { lat: t.lat[at]!, lon: t.lon[at]! };
  return (
    <Section title={title}>
      <ErrorNote error={track.error} />
      <svg
        class="map"
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`Track of ${source.data_id}`}
        data-testid="map"
        data-points={t.times.length}
      >
        {provider &&
          tilesFor(provider.url, view, W, H).map((tile) => (
            <image
              key={tile.href}
              href={tile.href}
              x={tile.x}
              y={tile.y}
              width={tile.size}
              height={tile.size}
              preserveAspectRatio="none"
              data-testid="map-tile"
              onLoad={(e) => ((e.currentTarget as SVGImageElement).dataset.loaded = "true")}
            />
          ))}
        <polyline points={points} fill="none" stroke="#1f6fd1" stroke-width="2" stroke-linejoin="round" />
        <circle
          cx={x(here.lon)}
          cy={y(here.lat)}
          r="6"
          fill="#d1401f"
          stroke="#fff"
          stroke-width="2"
          data-testid="map-cursor"
        />
      </svg>
      {provider?.attribution && (
        <p class="hint attribution" data-testid="map-attribution">
          Map: {provider.attribution}
        </p>
      )}
      <p class="hint" data-testid="map-position">
        {cursor === undefined ? "Latest position" : "At the cursor"}: {here.lat.toFixed(6)}, {here.lon.toFixed(6)}
      </p>
    </Section>
  );
}
