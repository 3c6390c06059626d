// One panel of a dashboard: its frame (title, the series it shows, its width and height, remove) around a plot,
// a map, a table of values or a log, all following the dashboard's shared time range and cursor.
import { useEffect, useRef } from "preact/hooks";
import { plotKey, plotLabel, type Plottable } from "./json-fields";
import { DataTable } from "./data-table";
import { MapPanel, type PositionSource } from "./map";
import { HEIGHTS, KINDS, WIDTHS, sameSeries, type Panel } from "./dashboard-model";
import { PlotPanel, type SharedTime } from "./plot-panel";
import { ValueTable } from "./value-table";
import { nameOf, type Labels } from "./series-labels";

/** What the measurement offers each kind of panel. */
export interface Sources {
  numeric: Plottable[];
  positions: PositionSource[];
  others: Plottable[];
}

const VERB = { plot: "Plot", table: "Show", map: "Map", log: "Log" } as const;

export function candidates(kind: Panel["kind"], s: Sources): Plottable[] {
  if (kind === "map") return s.positions.map((p) => ({ data_type: p.data_type, data_id: p.data_id }));
  return kind === "log" ? s.others : s.numeric;
}

export function panelTitle(p: Panel, labels?: Labels): string {
  if (p.title) return p.title;
  const kind = KINDS.find(([k]) => k === p.kind)![1];
  const names = p.series.map((s) => nameOf(s, labels));
  if (names.length === 0) return kind;
  return `${kind}: ${names.length > 3 ? `${names.slice(0, 3).join(", ")}…` : names.join(", ")}`;
}

export interface PanelProps {
  project: string;
  uuid: string;
  panel: Panel;
  sources: Sources;
  labels?: Labels;
  time: SharedTime;
  onChange(p: Panel): void;
  onRemove(): void;
}

export function DashboardPanel({ project, uuid, panel, sources, labels, time, onChange, onRemove }: PanelProps) {
  const title = panelTitle(panel, labels);
  const choice = useRef<HTMLDetailsElement>(null);
  // The series list floats over the panels below: a click elsewhere or Escape closes it.
  useEffect(() => {
    const close = (e: Event) => {
      const d = choice.current;
      if (d?.open && (e instanceof KeyboardEvent ? e.key === "Escape" : !d.contains(e.target as Node))) d.open = false;
    };
    document.addEventListener("mousedown", close);
    document.addEventListener("keydown", close);
    return () => {
      document.removeEventListener("mousedown", close);
      document.removeEventListener("keydown", close);
    };
  }, []);
  const offered = candidates(panel.kind, sources);
  // A saved dashboard may name series another measurement of the edge does not hold.
  const present = panel.series.filter((s) => offered.some((o) => sameSeries(o, s)));
  const missing = panel.series.length - present.length;
  const toggle = (s: Plottable) =>
    onChange({
      ...panel,
      series: panel.series.some((x) => sameSeries(x, s))
        ? panel.series.filter((x) => !sameSeries(x, s))
        : [...panel.series, s],
    });
  return (
    <div
      class="panel"
      role="group"
      aria-label={`Panel ${title}`}
      style={{ "--span": String(panel.width), "--panel-h": `${panel.height}px` }}
      data-width={panel.width}
      data-height={panel.height}
    >
      <div class="panel-head">
        <h3>{title}</h3>
        <details class="series-choice" ref={choice}>
          <summary>Series ({panel.series.length})</summary>
          <fieldset>
            <legend>Series of {title}</legend>
            {offered.length === 0 && <p class="hint">This measurement has no data for this kind of panel.</p>}
            {offered.map((s) => (
              <label key={plotKey(s)}>
                <input
                  type="checkbox"
                  aria-label={`${VERB[panel.kind]} ${plotLabel(s)}`}
                  checked={panel.series.some((x) => sameSeries(x, s))}
                  onChange={() => toggle(s)}
                />{" "}
                {nameOf(s, labels)}
              </label>
            ))}
          </fieldset>
        </details>
        <select
          aria-label={`Width of ${title}`}
          value={String(panel.width)}
          onChange={(e) => onChange({ ...panel, width: Number((e.target as HTMLSelectElement).value) })}
        >
          {WIDTHS.map(([w, label]) => (
            <option key={w} value={String(w)}>
              {label}
            </option>
          ))}
        </select>
        <select
          aria-label={`Height of ${title}`}
          value={String(panel.height)}
          onChange={(e) => onChange({ ...panel, height: Number((e.target as HTMLSelectElement).value) })}
        >
          {HEIGHTS.map(([h, label]) => (
            <option key={h} value={String(h)}>
              {label}
            </option>
          ))}
        </select>
        <button type="button" aria-label={`Remove ${title}`} onClick={onRemove}>
          Remove
        </button>
      </div>
      {missing > 0 && (
        <p class="hint">
          {missing} of its series {missing === 1 ? "is" : "are"} not in this measurement.
        </p>
      )}
      <PanelBody
        project={project}
        uuid={uuid}
        panel={{ ...panel, series: present }}
        sources={sources}
        labels={labels}
        time={time}
      />
    </div>
  );
}

function PanelBody({ project, uuid, panel, sources, labels, time }: Omit<PanelProps, "onChange" | "onRemove">) {
  switch (panel.kind) {
    case "plot":
      return (
        <PlotPanel
          project={project}
          uuid={uuid}
          series={panel.series}
          labels={labels}
          time={time}
          height={panel.height}
        />
      );
    case "table":
      return <ValueTable project={project} uuid={uuid} series={panel.series} labels={labels} time={time} />;
    case "map":
      return (
        <>
          {panel.series.map((s) => {
            const source = sources.positions.find((p) => p.data_type === s.data_type && p.data_id === s.data_id);
            return source ? (
              <MapPanel
                key={plotKey(s)}
                project={project}
                uuid={uuid}
                source={source}
                window={time.window}
                refresh={time.live ? time.refresh : 0}
                cursor={time.cursor}
              />
            ) : (
              <p class="hint" key={plotKey(s)}>
                No positions in {plotLabel(s)}.
              </p>
            );
          })}
        </>
      );
    case "log":
      return (
        <>
          {panel.series.map((s) => (
            <DataTable
              key={plotKey(s)}
              project={project}
              uuid={uuid}
              dataType={s.data_type}
              dataId={s.data_id}
              name={nameOf(s, labels)}
              refresh={time.live ? time.refresh : 0}
            />
          ))}
        </>
      );
  }
}
