// The data IDs of a measurement (and the numeric fields of its JSON ones), each with the display name and unit
// its edge gives it, editable in place.
import { useState } from "preact/hooks";
import { ErrorNote, Section, useAction } from "../common";
import { plotKey, type Plottable } from "./json-fields";
import { saveSeriesLabel, unitOf, type Labels } from "./series-labels";
import { CellInput, ListHead } from "../fields";

export function DataIds({
  project,
  edge,
  rows,
  labels,
  error,
  onSaved,
}: {
  project: string;
  edge?: string;
  rows: Plottable[];
  labels?: Labels;
  error?: Error;
  onSaved(): void;
}) {
  const [editing, setEditing] = useState<string | undefined>();
  return (
    <Section title="Data IDs">
      <ErrorNote error={error} />
      <table class="list" aria-label="Data IDs">
        <ListHead columns={["Name", "Display name", "Unit", "Type"]} />
        <tbody>
          {rows.map((d) =>
            editing === plotKey(d) && edge ? (
              <EditRow
                key={plotKey(d)}
                project={project}
                edge={edge}
                d={d}
                labels={labels}
                onDone={(saved) => {
                  setEditing(undefined);
                  if (saved) onSaved();
                }}
              />
            ) : (
              <tr key={plotKey(d)} class={d.field === undefined ? undefined : "field"}>
                <td>{nameCell(d)}</td>
                <td>{labels?.get(plotKey(d))?.display_name ?? ""}</td>
                <td>{unitOf(d, labels)}</td>
                <td>{d.field === undefined ? d.data_type : "number field"}</td>
                <td>
                  {edge && (
                    <button type="button" aria-label={`Edit ${nameCell(d)}`} onClick={() => setEditing(plotKey(d))}>
                      Edit
                    </button>
                  )}
                </td>
              </tr>
            ),
          )}
        </tbody>
      </table>
    </Section>
  );
}

const nameCell = (d: Plottable) => (d.field === undefined ? d.data_id : `${d.data_id} ${d.field}`);

function EditRow({
  project,
  edge,
  d,
  labels,
  onDone,
}: {
  project: string;
  edge: string;
  d: Plottable;
  labels?: Labels;
  onDone(saved: boolean): void;
}) {
  const [display, setDisplay] = useState(labels?.get(plotKey(d))?.display_name ?? "");
  const [unit, setUnit] = useState(unitOf(d, labels));
  const action = useAction();
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await saveSeriesLabel(project, edge, d, display, unit);
      onDone(true);
    });
  };
  const form = `label-${plotKey(d)}`;
  return (
    <tr class={d.field === undefined ? undefined : "field"}>
      <td>{nameCell(d)}</td>
      <td>
        <CellInput
          form={form}
          aria-label={`Display name of ${nameCell(d)}`}
          maxLength={200}
          value={display}
          onValue={setDisplay}
        />
      </td>
      <td>
        <CellInput
          form={form}
          aria-label={`Unit of ${nameCell(d)}`}
          maxLength={32}
          size={8}
          value={unit}
          onValue={setUnit}
        />
      </td>
      <td>{d.field === undefined ? d.data_type : "number field"}</td>
      <td>
        <form id={form} class="inline" aria-label={`Label of ${nameCell(d)}`} onSubmit={save}>
          <button type="submit" disabled={action.busy}>
            Save
          </button>
          <button type="button" onClick={() => onDone(false)}>
            Cancel
          </button>
        </form>
        <ErrorNote error={action.error} />
      </td>
    </tr>
  );
}
