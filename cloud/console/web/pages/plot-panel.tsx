// A dashboard's plot: its series reduced by the server to the plot's width over the shared window (finer when
// zoomed), each named and with its unit.
import { ErrorNote } from "../common";
import { useLoad } from "../hooks";
import { plotKey, type Plottable } from "./json-fields";
import { Plot, type PlotSeries } from "./plot";
import { fetchReduced, toSeries } from "./reduced";
import { titleOf, unitOf, type Labels } from "./series-labels";

export interface SharedTime {
  /** The window the panels load (epoch seconds); undefined: the whole measurement. */
  window?: [number, number];
  /** The plot's x range. */
  range: [number, number];
  /** Changes when a running measurement has news. */
  refresh: number;
  live: boolean;
  cursor?: number;
  /** The replay's play head, drawn across the plots. */
  marker?: number;
  onZoom(r: [number, number]): void;
  onCursor(t: number | undefined): void;
}

export function PlotPanel({
  project,
  uuid,
  series,
  labels,
  time,
  height,
}: {
  project: string;
  uuid: string;
  series: Plottable[];
  labels?: Labels;
  time: SharedTime;
  height: number;
}) {
  const key = series.map(plotKey).join("|");
  const loaded = useLoad(async () => {
    const buckets = Math.min(4000, Math.max(200, Math.round(window.innerWidth)));
    const all = await Promise.all(series.map((d) => fetchReduced(project, uuid, d, buckets, time.window)));
    return {
      series: all.map(
        (r, i): PlotSeries => ({ ...toSeries(titleOf(series[i]!, labels), r), unit: unitOf(series[i]!, labels) }),
      ),
      points: all.reduce((a, r) => a + r.point_count, 0),
    };
  }, [key, project, uuid, time.window?.[0], time.window?.[1], time.refresh, labels]);
  const shown = loaded.data?.series ?? [];
  return (
    <>
      <ErrorNote error={loaded.error} />
      {series.length === 0 && <p class="hint">Choose the series to plot.</p>}
      <div
        data-testid="plot"
        data-points={loaded.data?.points ?? 0}
        data-live={time.live ? "true" : "false"}
        data-start={time.range[0]}
        data-end={time.range[1]}
        data-axis-units={shown
          .slice(0, 2)
          .map((s) => s.unit ?? "")
          .join(" ")}
      >
        {shown.length > 0 && (
          <Plot
            series={shown}
            range={time.range}
            onZoom={time.onZoom}
            onCursor={time.onCursor}
            marker={time.marker}
            height={height}
            label={`Plot of ${series.map((s) => titleOf(s, labels)).join(", ")}`}
          />
        )}
      </div>
    </>
  );
}
