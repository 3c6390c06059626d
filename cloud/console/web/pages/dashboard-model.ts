// A dashboard: panels (plots, maps, tables of values, logs) on a 12-column grid, each with its series, sharing the
// measurement's time range and cursor. Saved per project on the peer; without a saved one a measurement opens on
// the automatic dashboard, made from the data IDs it holds.
import { api } from "../api";
import { plotKey, type Plottable } from "./json-fields";

export type PanelKind = "plot" | "map" | "table" | "log";

export interface Panel {
  kind: PanelKind;
  title?: string;
  series: Plottable[];
  /** Columns of 12. */
  width: number;
  /** Pixels. */
  height: number;
}

export interface SavedDashboard {
  uuid: string;
  name: string;
  panels: Panel[];
  default_edge_uuids: string[];
}

export const KINDS: Array<[PanelKind, string]> = [
  ["plot", "Plot"],
  ["map", "Map"],
  ["table", "Table of values"],
  ["log", "Log"],
];
export const WIDTHS: Array<[number, string]> = [
  [4, "Third"],
  [6, "Half"],
  [8, "Two thirds"],
  [12, "Full"],
];
export const HEIGHTS: Array<[number, string]> = [
  [240, "Small"],
  [360, "Medium"],
  [520, "Large"],
];

const MAX_PLOTTED = 8;

/** The series a new panel of a kind starts with: none for a plot or table (chosen next), the first source otherwise. */
export function newPanel(kind: PanelKind, candidates: Plottable[]): Panel {
  const first = kind === "map" || kind === "log" ? candidates.slice(0, 1) : [];
  return { kind, series: first, width: kind === "plot" ? 12 : 6, height: kind === "table" ? 240 : 360 };
}

/** Today's layout for any measurement: its numeric series on one plot, a map per position source, a log per other ID. */
export function automaticPanels(numeric: Plottable[], positions: Plottable[], others: Plottable[]): Panel[] {
  return [
    ...(numeric.length
      ? [{ kind: "plot" as const, series: numeric.slice(0, MAX_PLOTTED), width: 12, height: 360 }]
      : []),
    ...positions.map((p) => ({ kind: "map" as const, series: [p], width: 12, height: 360 })),
    ...others.map((p) => ({ kind: "log" as const, series: [p], width: 12, height: 360 })),
  ];
}

/** Only the keys the peer keeps (no field key when there is none). */
const ref = (p: Plottable): Plottable => ({
  data_type: p.data_type,
  data_id: p.data_id,
  ...(p.field === undefined ? {} : { field: p.field }),
});
const body = (panels: Panel[]) =>
  panels.map((p) => ({ ...p, series: p.series.map(ref), ...(p.title ? { title: p.title } : { title: undefined }) }));

const path = (project: string) => `/v1/projects/${project}/dashboards`;

export const listDashboards = (project: string) =>
  api<{ items: SavedDashboard[] }>(`${path(project)}?per_page=200`).then((r) => r.items);

export const createDashboard = (project: string, name: string, panels: Panel[]) =>
  api<SavedDashboard>(path(project), { method: "POST", json: { name, panels: body(panels) } });

export const updateDashboard = (
  project: string,
  uuid: string,
  change: { name?: string; panels?: Panel[]; default_edge_uuids?: string[] },
) =>
  api<SavedDashboard>(`${path(project)}/${uuid}`, {
    method: "PATCH",
    json: { ...change, ...(change.panels ? { panels: body(change.panels) } : {}) },
  });

export const deleteDashboard = (project: string, uuid: string) => api(`${path(project)}/${uuid}`, { method: "DELETE" });

export const sameSeries = (a: Plottable, b: Plottable) => plotKey(a) === plotKey(b);
