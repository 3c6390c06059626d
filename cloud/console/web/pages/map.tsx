// A measurement's track: the positions of a data ID with latitude and longitude fields (JSON, as a GNSS
// receiver's connector sends them), drawn as a line on a plain equirectangular projection, with the position at
// the plot's cursor (or the latest one while nothing is pointed at). No map tiles: a self-hosted peer may have
// no internet, and the track alone shows where the vehicle went.
import { Section, ErrorNote } from "../common";
import { useLoad } from "../hooks";
import type { Plottable } from "./json-fields";
import { bucketMiddles, fetchReduced } from "./reduced";

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
  const t = track.data;
  const title = `Map of ${source.data_id}`;
  if (!t || t.times.length === 0)
    return (
      <Section title={title}>
        <ErrorNote error={track.error} />
        {t && <p class="hint">No positions yet.</p>}
      </Section>
    );

  const [latMin, latMax] = [Math.min(...t.lat), Math.max(...t.lat)];
  const [lonMin, lonMax] = [Math.min(...t.lon), Math.max(...t.lon)];
  // Longitude degrees shrink with the cosine of the latitude: keep the track's shape.
  const kx = Math.cos((((latMin + latMax) / 2) * Math.PI) / 180);
  const spanX = Math.max((lonMax - lonMin) * kx, 1e-6);
  const spanY = Math.max(latMax - latMin, 1e-6);
  const scale = Math.min((W - 2 * PAD) / spanX, (H - 2 * PAD) / spanY);
  const x = (lon: number) => PAD + (W - 2 * PAD - spanX * scale) / 2 + (lon - lonMin) * kx * scale;
  const y = (lat: number) => H - PAD - (H - 2 * PAD - spanY * scale) / 2 - (lat - latMin) * scale;
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
      <p class="hint" data-testid="map-position">
        {cursor === undefined ? "Latest position" : "At the cursor"}: {here.lat.toFixed(6)}, {here.lon.toFixed(6)}
      </p>
    </Section>
  );
}
