// Renaming a measurement (PUT .../measurements/{uuid} with its name): the list shows measurements by name.
import { useState } from "preact/hooks";
import { api } from "../api";
import { ErrorNote, useAction } from "../common";
import { TextField } from "../fields";

export function RenameMeasurement({
  project,
  uuid,
  name,
  onRenamed,
}: {
  project: string;
  uuid: string;
  name: string;
  onRenamed(): void;
}) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(name);
  const act = useAction();
  if (!editing)
    return (
      <button type="button" onClick={() => (setValue(name), setEditing(true))}>
        Rename
      </button>
    );
  const save = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      await api(`/v1/projects/${project}/measurements/${uuid}`, { method: "PUT", json: { name: value.trim() } });
      setEditing(false);
      onRenamed();
    });
  };
  return (
    <form class="inline" onSubmit={save} aria-label="Rename measurement">
      <TextField label="Name" value={value} maxLength={256} autoFocus onValue={setValue} />
      <button type="submit" disabled={act.busy}>
        Save
      </button>
      <button type="button" onClick={() => setEditing(false)}>
        Cancel
      </button>
      <ErrorNote error={act.error} />
    </form>
  );
}
