// Creating groups, sub-groups and projects from the organisation tree (intdash REST API: createGroup,
// createSubGroup, createProject), and a group's details: its members and what can be made inside it.
import { useState } from "preact/hooks";
import { api } from "../api";
import { useAllowed } from "../allowed";
import { ErrorNote, Section, useAction } from "../common";
import { Members } from "./members";
import { TextField } from "../fields";

export interface OrgNode {
  uuid: string;
  name: string;
  parent_group_uuid: string | null;
}

/** A one-field form that POSTs `{name}` to `path`; left out when the user may not make that call. */
export function NameForm({
  path,
  label,
  button,
  onMade,
}: {
  path: string;
  label: string;
  button: string;
  onMade(made: OrgNode): void;
}) {
  const allowed = useAllowed("POST", path);
  const [name, setName] = useState("");
  const act = useAction();
  if (!allowed) return null;
  const submit = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      const made = await api<OrgNode>(path, { method: "POST", json: { name } });
      setName("");
      onMade(made);
    });
  };
  return (
    <form class="inline" onSubmit={submit} aria-label={button}>
      <ErrorNote error={act.error} />
      <TextField label={label} value={name} required maxLength={255} onValue={setName} />
      <button type="submit" disabled={act.busy}>
        {button}
      </button>
    </form>
  );
}

export function GroupDetails({ group, onMade }: { group: OrgNode; onMade(made: OrgNode): void }) {
  const base = `/auth/groups/${group.uuid}`;
  return (
    <Section title={`Group ${group.name}`}>
      <NameForm path={`${base}/groups`} label="Sub-group name" button="Create sub-group" onMade={onMade} />
      <NameForm path={`${base}/projects`} label="Project name" button="Create project" onMade={onMade} />
      <Members key={base} base={base} title={group.name} />
    </Section>
  );
}
