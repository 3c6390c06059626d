// The organisation: groups, sub-groups and projects as a tree (new ones made from it); a group's or
// project's members with their roles; a project's edges; users (for those allowed); edges.
import { useState } from "preact/hooks";
import { api } from "../api";
import { useAllowed } from "../allowed";
import type { Me } from "../app";
import { ErrorNote, Section, useAction } from "../common";
import { useLoad } from "../hooks";
import { Members } from "./members";
import { EdgesSection, useEdges } from "./org-edges";
import { GroupDetails, NameForm, type OrgNode as Node } from "./org-groups";
import { UsersSection } from "./users";
import { Webhooks } from "./webhooks";
import { TextField } from "../fields";

type Selected = { kind: "group" | "project"; node: Node };

function Tree({
  groups,
  projects,
  parent,
  selected,
  onSelect,
}: {
  groups: Node[];
  projects: Node[];
  parent: string | null;
  selected?: string;
  onSelect(s: Selected): void;
}) {
  const subGroups = groups.filter((g) => g.parent_group_uuid === parent);
  const own = projects.filter((p) => p.parent_group_uuid === parent);
  if (subGroups.length === 0 && own.length === 0) return null;
  return (
    <ul class="tree">
      {subGroups.map((g) => (
        <li key={g.uuid}>
          <button
            type="button"
            class="link group"
            aria-pressed={selected === g.uuid}
            onClick={() => onSelect({ kind: "group", node: g })}
          >
            ▾ {g.name}
          </button>
          <Tree groups={groups} projects={projects} parent={g.uuid} selected={selected} onSelect={onSelect} />
        </li>
      ))}
      {own.map((p) => (
        <li key={p.uuid}>
          <button
            type="button"
            class="link"
            aria-pressed={selected === p.uuid}
            onClick={() => onSelect({ kind: "project", node: p })}
          >
            {p.name}
          </button>
        </li>
      ))}
    </ul>
  );
}

function ProjectDetails({ project, me }: { project: Node; me: Me }) {
  const base = `/auth/projects/${project.uuid}`;
  const edges = useLoad(
    () =>
      api<{ items: { edge_uuid: string; name: string; nickname: string }[] }>(`${base}/edges?per_page=200`).then(
        (r) => r.items,
      ),
    [project.uuid],
  );
  const known = useEdges(me);
  const canAdd = useAllowed("POST", `${base}/edges`);
  const [edgeName, setEdgeName] = useState("");
  const act = useAction();
  // Suggested: the edges the user manages that are not in the project yet.
  const addable = (known.data ?? []).filter((k) => !edges.data?.some((e) => e.edge_uuid === k.uuid));
  const add = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      await api(`${base}/edges`, { method: "POST", json: { edge_name: edgeName } });
      setEdgeName("");
      edges.reload();
    });
  };
  return (
    <Section title={`Project ${project.name}`}>
      <Members key={base} base={base} title={project.name} />
      <h3>Edges</h3>
      <ErrorNote error={edges.error ?? act.error} />
      <ul>
        {edges.data?.map((e) => (
          <li key={e.edge_uuid}>{e.nickname || e.name}</li>
        ))}
        {edges.data?.length === 0 && <li class="empty">No edges.</li>}
      </ul>
      {canAdd && (
        <form class="inline" onSubmit={add} aria-label="Add an edge to the project">
          <TextField label="Edge name" value={edgeName} required list="addable-edges" onValue={setEdgeName} />
          <datalist id="addable-edges">
            {addable.map((k) => (
              <option key={k.uuid} value={k.name} />
            ))}
          </datalist>
          <button type="submit" disabled={act.busy}>
            Add to project
          </button>
        </form>
      )}
      <Webhooks key={`hooks-${project.uuid}`} project={project.uuid} />
    </Section>
  );
}

export function OrgPage({ me }: { me: Me }) {
  const tree = useLoad(async () => {
    const groups = await api<{ items: Node[] }>(
      me.is_super ? "/auth/groups?per_page=200" : "/auth/users/me/groups?per_page=200",
    );
    const projects = await api<{ items: Node[] }>(
      me.is_super ? "/auth/projects?per_page=200" : "/auth/users/me/projects?per_page=200",
    );
    return { groups: groups.items, projects: projects.items };
  }, [me.is_super]);
  const [selected, setSelected] = useState<Selected>();
  // Groups whose parent is not visible to this user are shown at the top level.
  const visible = new Set(tree.data?.groups.map((g) => g.uuid));
  const groups = (tree.data?.groups ?? []).map((g) =>
    g.parent_group_uuid && !visible.has(g.parent_group_uuid) ? { ...g, parent_group_uuid: null } : g,
  );
  const projects = (tree.data?.projects ?? []).map((p) =>
    p.parent_group_uuid && !visible.has(p.parent_group_uuid) ? { ...p, parent_group_uuid: null } : p,
  );
  const made = () => tree.reload();
  return (
    <>
      <div class="columns">
        <Section title="Groups and projects">
          <ErrorNote error={tree.error} />
          <Tree
            groups={groups}
            projects={projects}
            parent={null}
            selected={selected?.node.uuid}
            onSelect={setSelected}
          />
          <NameForm path="/auth/groups" label="Group name" button="Create group" onMade={made} />
        </Section>
        {selected?.kind === "project" && <ProjectDetails key={selected.node.uuid} project={selected.node} me={me} />}
        {selected?.kind === "group" && <GroupDetails key={selected.node.uuid} group={selected.node} onMade={made} />}
        {!selected && (
          <Section title="Project">
            <p class="hint">Choose a group or a project to see its members, and a project's edges.</p>
          </Section>
        )}
      </div>
      <UsersSection />
      <EdgesSection me={me} />
    </>
  );
}
