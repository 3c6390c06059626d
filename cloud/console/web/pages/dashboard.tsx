// A measurement's dashboard: panels sharing the measurement's time range and cursor. It opens on the dashboard
// its edge has as default, else on the automatic one (every numeric series on one plot, a map per position, a
// log per other data ID); panels can be added, removed, resized and their series chosen, and the result saved
// for the project, as a new dashboard or over the one shown.
import { useState } from "preact/hooks";
import { ErrorNote, useAction } from "../common";
import { useLoad } from "../hooks";
import {
  KINDS,
  automaticPanels,
  createDashboard,
  deleteDashboard,
  listDashboards,
  newPanel,
  updateDashboard,
  type Panel,
  type PanelKind,
} from "./dashboard-model";
import { DashboardPanel, candidates, type Sources } from "./dashboard-panel";
import type { SharedTime } from "./plot-panel";
import type { Labels } from "./series-labels";
import { TextField } from "../fields";

const AUTO = "auto";

export function Dashboard({
  project,
  uuid,
  edge,
  sources,
  labels,
  time,
}: {
  project: string;
  uuid: string;
  edge: string;
  sources: Sources;
  labels?: Labels;
  time: SharedTime;
}) {
  const saved = useLoad(() => listDashboards(project), [project]);
  const [picked, setPicked] = useState<string | undefined>();
  const [edited, setEdited] = useState<Panel[] | undefined>();
  const [kind, setKind] = useState<PanelKind>("plot");
  const [naming, setNaming] = useState(false);
  const [name, setName] = useState("");
  // The edge-default box as clicked, until the saved list says so.
  const [defaultOn, setDefaultOn] = useState<boolean | undefined>();
  const action = useAction();

  const list = saved.data ?? [];
  const edgeDefault = list.find((d) => d.default_edge_uuids.includes(edge));
  // Until the user picks one: the edge's default once the list is known.
  const chosen = picked ?? (saved.data ? (edgeDefault?.uuid ?? AUTO) : undefined);
  const current = list.find((d) => d.uuid === chosen);
  const panels =
    edited ?? current?.panels ?? automaticPanels(sources.numeric, candidates("map", sources), sources.others);
  const change = (next: Panel[]) => setEdited(next);
  const pick = (v: string) => {
    setPicked(v);
    setDefaultOn(undefined);
    setEdited(undefined);
    setNaming(false);
  };

  const saveOver = () =>
    action.run(async () => {
      await updateDashboard(project, current!.uuid, { panels });
      setEdited(undefined);
      saved.reload();
    });
  const saveNew = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const made = await createDashboard(project, name.trim(), panels);
      setNaming(false);
      setName("");
      setPicked(made.uuid);
      setEdited(undefined);
      saved.reload();
    });
  };
  const setDefault = (on: boolean) => {
    setDefaultOn(on);
    return action.run(async () => {
      const others = current!.default_edge_uuids.filter((x) => x !== edge);
      await updateDashboard(project, current!.uuid, { default_edge_uuids: on ? [...others, edge] : others });
      saved.reload();
    });
  };
  const pickedDefault = current && current.default_edge_uuids.includes(edge);
  if (defaultOn !== undefined && defaultOn === pickedDefault) setDefaultOn(undefined);
  const remove = () =>
    action.run(async () => {
      await deleteDashboard(project, current!.uuid);
      pick(AUTO);
      saved.reload();
    });

  return (
    <div class="dashboard">
      <ErrorNote error={saved.error ?? action.error} />
      <div class="toolbar dashboard-bar">
        <label>
          Dashboard{" "}
          <select
            aria-label="Dashboard"
            value={chosen ?? AUTO}
            onChange={(e) => pick((e.target as HTMLSelectElement).value)}
          >
            <option value={AUTO}>Automatic</option>
            {list.map((d) => (
              <option key={d.uuid} value={d.uuid}>
                {d.name}
              </option>
            ))}
          </select>
        </label>
        {current && (
          <label>
            <input
              type="checkbox"
              checked={defaultOn ?? pickedDefault}
              disabled={action.busy}
              onChange={(e) => void setDefault((e.target as HTMLInputElement).checked)}
            />{" "}
            Open this edge's measurements on it
          </label>
        )}
        <label>
          New panel{" "}
          <select
            aria-label="New panel"
            value={kind}
            onChange={(e) => setKind((e.target as HTMLSelectElement).value as PanelKind)}
          >
            {KINDS.map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => change([...panels, newPanel(kind, candidates(kind, sources))])}>
          Add panel
        </button>
        {current && (
          <button type="button" disabled={!edited || action.busy} onClick={() => void saveOver()}>
            Save
          </button>
        )}
        <button type="button" onClick={() => setNaming(true)} disabled={naming}>
          Save as new dashboard
        </button>
        {current && (
          <button type="button" disabled={action.busy} onClick={() => void remove()}>
            Delete dashboard
          </button>
        )}
        <span class="hint" data-testid="dashboard-state">
          {edited ? "Unsaved changes" : current ? "Saved" : ""}
        </span>
      </div>
      {naming && (
        <form class="inline" aria-label="Save dashboard" onSubmit={saveNew}>
          <TextField label="Dashboard name" required maxLength={200} value={name} onValue={setName} />
          <button type="submit" disabled={action.busy || !name.trim()}>
            Save dashboard
          </button>
          <button type="button" onClick={() => setNaming(false)}>
            Cancel
          </button>
        </form>
      )}
      <div class="panels">
        {panels.map((p, i) => (
          <DashboardPanel
            key={i}
            project={project}
            uuid={uuid}
            panel={p}
            sources={sources}
            labels={labels}
            time={time}
            onChange={(next) => change(panels.map((x, j) => (j === i ? next : x)))}
            onRemove={() => change(panels.filter((_x, j) => j !== i))}
          />
        ))}
      </div>
      {panels.length === 0 && <p class="hint">No panels: add one above.</p>}
    </div>
  );
}
