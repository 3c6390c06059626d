// One measurement: what it is, the data IDs it holds, its numeric series plotted (reduced by the
// server to the plot's width, finer when zoomed, following a running measurement live), the other
// data in tables, its markers, and downloads.
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, q } from "../api";
import { ErrorNote, Section } from "../common";
import { fmtCount, fmtDuration, fmtTime } from "../format";
import { useLoad } from "../hooks";
import { followMeasurement } from "../live";
import { isNumericType } from "../values";
import type { Measurement } from "./measurements";
import { useEdgeNames } from "./measurements";
import { Plot, type PlotSeries } from "./plot";
import { fetchReduced, toSeries } from "./reduced";
import { MapPanel, positionSources } from "./map";
import { RenameMeasurement } from "./measurement-name";
import { DataTable, Downloads } from "./data-table";
import { MarkersPanel } from "./markers";
import { plotKey as idKey, plotLabel, useJsonFields, type Plottable } from "./json-fields";
import { followHead, ReplayBar, useReplay } from "./replay";

type DataId = Plottable;

const MAX_PLOTTED = 8;
/** The time ranges offered: the whole measurement, or its last seconds (sliding while it runs). */
const RANGES: Array<[number | undefined, string]> = [
  [undefined, "Whole measurement"],
  [10, "Last 10 s"],
  [60, "Last 1 min"],
  [300, "Last 5 min"],
  [3600, "Last 1 h"],
];

export function MeasurementPage({ project, uuid }: { project: string; uuid: string }) {
  const meas = useLoad(() => api<Measurement>(`/v1/projects/${project}/measurements/${uuid}`), [project, uuid], {
    pollMs: 2000,
    poll: (m) => m?.status !== "finished",
  });
  const ids = useLoad(
    () => api<{ items: DataId[] }>(`/v1/projects/${project}/data_ids${q({ name: uuid })}`).then((r) => r.items),
    [project, uuid],
    {
      pollMs: 3000,
      poll: () => meas.data?.status === "measuring",
    },
  );
  const edges = useEdgeNames(project);
  const fields = useJsonFields(project, uuid, ids.data ?? []);
  const plainNumeric = (ids.data ?? []).filter((d) => isNumericType(d.data_type) && d.data_type !== "json");
  const others = (ids.data ?? []).filter((d) => !plainNumeric.includes(d));
  // Numeric data IDs, and each numeric field of the JSON ones (listed under their data ID).
  const rows = (ids.data ?? []).flatMap((d) => [
    d,
    ...(fields.data ?? []).filter((f) => f.data_type === d.data_type && f.data_id === d.data_id),
  ]);
  const numeric = rows.filter((d) => d.field !== undefined || plainNumeric.includes(d));
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const plotted = numeric.filter((d) => !hidden.has(idKey(d))).slice(0, MAX_PLOTTED);
  const [zoom, setZoom] = useState<[number, number] | undefined>();
  const [tick, setTick] = useState(0);
  const running = meas.data?.status === "measuring";

  const m = meas.data;
  const base = m ? Date.parse(m.basetime) / 1000 : 0;
  const fullEnd = m ? base + Math.max(m.duration / 1e6, 0.001) : 1;
  // A relative range ("last 5 min") ends at the measurement's end, or at now while it runs: then it slides.
  const [last, setLast] = useState<number | undefined>();
  const endNow = () => (running ? Math.max(fullEnd, Date.now() / 1000) : fullEnd);
  // Replaying a recorded measurement, a relative range ends at the play head instead.
  const replay = useReplay(base, fullEnd);
  const head = running ? undefined : replay.at;
  const followed = head !== undefined && last && !zoom ? followHead(head, last) : undefined;
  const windowNow = (): [number, number] | undefined =>
    zoom ?? followed?.load ?? (last ? [Math.max(base, endNow() - last), endNow()] : undefined);
  const range: [number, number] = followed?.show ?? windowNow() ?? [base, endNow()];

  // Live: refetch on each measurement event, and at least every 2 s while measuring.
  useEffect(() => {
    if (!running || zoom) return;
    const stop = followMeasurement(project, uuid, () => setTick((t) => t + 1));
    const poll = setInterval(() => setTick((t) => t + 1), 2000);
    return () => {
      stop();
      clearInterval(poll);
    };
  }, [running, zoom, project, uuid]);

  const plotKey = plotted.map(idKey).join("|");
  const series = useLoad(async () => {
    const shown = windowNow();
    if (!m || plotted.length === 0)
      return { series: [] as PlotSeries[], counts: new Map<string, number>(), window: shown };
    const buckets = Math.min(4000, Math.max(200, Math.round(window.innerWidth)));
    const all = await Promise.all(plotted.map((d) => fetchReduced(project, uuid, d, buckets, shown)));
    return {
      series: all.map((r, i) => toSeries(plotLabel(plotted[i]!), r)),
      counts: new Map(all.map((r, i) => [idKey(plotted[i]!), r.point_count])),
      window: shown,
    };
  }, [plotKey, m?.basetime, zoom?.[0], zoom?.[1], last, tick, !!m, followed?.load[0]]);
  const onZoom = useCallback((r: [number, number]) => setZoom(r), []);
  const [cursor, setCursor] = useState<number | undefined>();
  const positions = positionSources(fields.data ?? []);
  const span = range[1] - range[0];
  const total = [...(series.data?.counts.values() ?? [])].reduce((a, b) => a + b, 0);

  return (
    <>
      <Section
        title={m ? `Measurement ${m.name || m.uuid}` : "Measurement"}
        actions={<a href={`#/measurements?project=${project}`}>All measurements</a>}
      >
        <ErrorNote error={meas.error} />
        {m && (
          <dl class="facts">
            <dt>Edge</dt>
            <dd>{edges.data?.get(m.edge_uuid) ?? m.edge_uuid}</dd>
            <dt>Base time</dt>
            <dd>{fmtTime(m.basetime)}</dd>
            <dt>Duration</dt>
            <dd>{fmtDuration(m.duration / 1e6)}</dd>
            <dt>Status</dt>
            <dd>
              <span class={`badge ${m.status}`}>{m.status}</span>
            </dd>
            <dt>Points</dt>
            <dd>
              {fmtCount(m.received_data_points)}
              {running && !m.sequences.expected_data_points
                ? " (receiving)"
                : ` / ${fmtCount(m.sequences.expected_data_points)}`}
            </dd>
          </dl>
        )}
        {m && <Downloads project={project} uuid={uuid} name={m.name || m.uuid} />}
        {m && <RenameMeasurement project={project} uuid={uuid} name={m.name} onRenamed={meas.reload} />}
      </Section>
      <MarkersPanel project={project} uuid={uuid} />
      <Section title="Data IDs">
        <ErrorNote error={ids.error ?? fields.error} />
        <table class="list" aria-label="Data IDs">
          <thead>
            <tr>
              <th scope="col">Plot</th>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col" class="num">
                Points
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={idKey(d)} class={d.field === undefined ? undefined : "field"}>
                <td>
                  {numeric.includes(d) && (
                    <input
                      type="checkbox"
                      aria-label={`Plot ${plotLabel(d)}`}
                      checked={!hidden.has(idKey(d))}
                      onChange={() =>
                        setHidden((h) => {
                          const n = new Set(h);
                          n.has(idKey(d)) ? n.delete(idKey(d)) : n.add(idKey(d));
                          return n;
                        })
                      }
                    />
                  )}
                </td>
                <td>{d.field === undefined ? d.data_id : `${d.data_id} ${d.field}`}</td>
                <td>{d.field === undefined ? d.data_type : "number field"}</td>
                <td class="num">{fmtCount(series.data?.counts.get(idKey(d)))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      {m && !running && <ReplayBar replay={replay} start={base} end={fullEnd} />}
      {plotted.length > 0 && (
        <Section
          title="Plot"
          actions={
            <div class="toolbar">
              <label>
                Time range{" "}
                <select
                  value={String(last ?? "")}
                  onChange={(e) => {
                    const v = (e.target as HTMLSelectElement).value;
                    setLast(v ? Number(v) : undefined);
                    setZoom(undefined);
                  }}
                >
                  {RANGES.map(([seconds, label]) => (
                    <option key={label} value={String(seconds ?? "")}>
                      {label}
                    </option>
                  ))}
                </select>
              </label>
              <button type="button" onClick={() => setZoom([range[0] - span / 4, range[1] - span / 4])}>
                Pan left
              </button>
              <button type="button" onClick={() => setZoom([range[0] + span / 4, range[1] + span / 4])}>
                Pan right
              </button>
              <button type="button" onClick={() => setZoom([range[0] + span / 4, range[1] - span / 4])}>
                Zoom in
              </button>
              <button type="button" onClick={() => setZoom([range[0] - span / 2, range[1] + span / 2])}>
                Zoom out
              </button>
              {running && !zoom ? (
                <button type="button" class="live" aria-pressed="true" title="Following the running measurement">
                  ● Live
                </button>
              ) : (
                <button type="button" disabled={!zoom} onClick={() => setZoom(undefined)}>
                  {running ? "Follow live" : "Show all"}
                </button>
              )}
            </div>
          }
        >
          <ErrorNote error={series.error} />
          <p class="hint">
            {running && !zoom ? `Live: following the running measurement${last ? ", the window sliding" : ""}. ` : ""}
            Drag across the plot to zoom in.
          </p>
          <div
            data-testid="plot"
            data-points={total}
            data-live={running && !zoom ? "true" : "false"}
            data-start={range[0]}
            data-end={range[1]}
          >
            {series.data && series.data.series.length > 0 && (
              <Plot
                series={series.data.series}
                range={range}
                onZoom={onZoom}
                onCursor={setCursor}
                marker={head}
                label={`Plot of ${plotted.map(plotLabel).join(", ")}`}
              />
            )}
          </div>
        </Section>
      )}
      {positions.map((p) => (
        <MapPanel
          key={`${p.data_type}:${p.data_id}`}
          project={project}
          uuid={uuid}
          source={p}
          window={series.data?.window}
          refresh={running ? tick : 0}
          cursor={cursor ?? head}
        />
      ))}
      {others.map((d) => (
        <DataTable
          key={idKey(d)}
          project={project}
          uuid={uuid}
          dataType={d.data_type}
          dataId={d.data_id}
          refresh={running ? tick : 0}
        />
      ))}
    </>
  );
}
