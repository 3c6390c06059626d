// Display names and units of an edge's series (the peer's series_labels, per project and edge, keyed by data
// type, data ID and JSON field): a series shows its display name where it has one, and its unit on the plot's
// axis and legend and in tables.
import { api, q } from "../api";
import { useLoad } from "../hooks";
import { plotKey, plotLabel, type Plottable } from "./json-fields";

export interface SeriesLabel {
  data_type: string;
  data_id: string;
  field?: string;
  display_name: string;
  unit: string;
}

export type Labels = Map<string, SeriesLabel>;

export function useSeriesLabels(project: string, edge: string | undefined) {
  return useLoad(async () => {
    if (!edge) return new Map() as Labels;
    const r = await api<{ items: SeriesLabel[] }>(`/v1/projects/${project}/series_labels${q({ edge_uuid: edge })}`);
    return new Map(r.items.map((l) => [plotKey(l), l])) as Labels;
  }, [project, edge]);
}

export function saveSeriesLabel(project: string, edge: string, p: Plottable, display_name: string, unit: string) {
  return api(`/v1/projects/${project}/series_labels`, {
    method: "PUT",
    json: { edge_uuid: edge, data_type: p.data_type, data_id: p.data_id, field: p.field, display_name, unit },
  });
}

/** The series' display name, or its data ID (and field). */
export const nameOf = (p: Plottable, labels?: Labels) => labels?.get(plotKey(p))?.display_name || plotLabel(p);
export const unitOf = (p: Plottable, labels?: Labels) => labels?.get(plotKey(p))?.unit ?? "";
/** "Speed (km/h)": the name with its unit, as legends and table headers show it. */
export const titleOf = (p: Plottable, labels?: Labels) => {
  const unit = unitOf(p, labels);
  return unit ? `${nameOf(p, labels)} (${unit})` : nameOf(p, labels);
};
