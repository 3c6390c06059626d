// The organisation: groups, sub-groups and projects as a tree; a project's members and edges;
// users (for those allowed); edges (create with the secret shown once, add to a project).
import { useState } from "preact/hooks";
import { api } from "../api";
import type { Me } from "../app";
import { ErrorNote, Section, ShownOnce, useAction } from "../common";
import { useLoad } from "../hooks";
import { UsersSection } from "./users";

interface Node {
  uuid: string;
  name: string;
  parent_group_uuid: string | null;
}

function Tree({ groups, projects, parent, selected, onSelect }: { groups: Node[]; projects: Node[]; parent: string | null; selected?: string; onSelect(p: Node): void }) {
  const subGroups = groups.filter((g) => g.parent_group_uuid === parent);
  const own = projects.filter((p) => p.parent_group_uuid === parent);
  if (subGroups.length === 0 && own.length === 0) return null;
  return (
    <ul class="tree">
      {subGroups.map((g) => (
        <li key={g.uuid}>
          <span class="group">▾ {g.name}</span>
          <Tree groups={groups} projects={projects} parent={g.uuid} selected={selected} onSelect={onSelect} />
        </li>
      ))}
      {own.map((p) => (
        <li key={p.uuid}>
          <button type="button" class="link" aria-pressed={selected === p.uuid} onClick={() => onSelect(p)}>{p.name}</button>
        </li>
      ))}
    </ul>
  );
}

function ProjectDetails({ project }: { project: Node }) {
  const members = useLoad(() => api<{ items: { user_uuid: string; name: string; is_owner: boolean; role_uuids: string[] }[] }>(`/auth/projects/${project.uuid}/members?per_page=200`).then((r) => r.items), [project.uuid]);
  const edges = useLoad(() => api<{ items: { edge_uuid: string; name: string; nickname: string }[] }>(`/auth/projects/${project.uuid}/edges?per_page=200`).then((r) => r.items), [project.uuid]);
  const [edgeName, setEdgeName] = useState("");
  const act = useAction();
  const add = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      await api(`/auth/projects/${project.uuid}/edges`, { method: "POST", json: { edge_name: edgeName } });
      setEdgeName("");
      edges.reload();
    });
  };
  return (
    <Section title={`Project ${project.name}`}>
      <ErrorNote error={members.error ?? edges.error ?? act.error} />
      <h3>Members</h3>
      <ul>
        {members.data?.map((m) => <li key={m.user_uuid}>{m.name}{m.is_owner ? " (owner)" : ""}</li>)}
        {members.data?.length === 0 && <li class="empty">No members.</li>}
      </ul>
      <h3>Edges</h3>
      <ul>
        {edges.data?.map((e) => <li key={e.edge_uuid}>{e.nickname || e.name}</li>)}
        {edges.data?.length === 0 && <li class="empty">No edges.</li>}
      </ul>
      <form class="inline" onSubmit={add} aria-label="Add an edge to the project">
        <label>
          Edge name <input value={edgeName} required onInput={(e) => setEdgeName((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={act.busy}>Add to project</button>
      </form>
    </Section>
  );
}

function NewEdge() {
  const [name, setName] = useState("");
  const [secret, setSecret] = useState<{ label: string; value: string }>();
  const act = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      const edge = await api<{ uuid: string; name: string; client_secret?: string }>("/auth/edges", { method: "POST", json: { name } });
      if (edge.client_secret) setSecret({ label: `Secret of edge ${edge.name} (client ID ${edge.uuid})`, value: edge.client_secret });
      setName("");
    });
  };
  return (
    <Section title="New edge">
      <ErrorNote error={act.error} />
      {secret && <ShownOnce label={secret.label} value={secret.value} onDone={() => setSecret(undefined)} />}
      <form class="inline" onSubmit={create} aria-label="New edge">
        <label>
          Edge name <input value={name} required onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={act.busy}>Create edge</button>
      </form>
    </Section>
  );
}

export function OrgPage({ me }: { me: Me }) {
  const tree = useLoad(async () => {
    const groups = await api<{ items: Node[] }>(me.is_super ? "/auth/groups?per_page=200" : "/auth/users/me/groups?per_page=200");
    const projects = await api<{ items: Node[] }>(me.is_super ? "/auth/projects?per_page=200" : "/auth/users/me/projects?per_page=200");
    return { groups: groups.items, projects: projects.items };
  }, [me.is_super]);
  const [selected, setSelected] = useState<Node>();
  // Groups whose parent is not visible to this user are shown at the top level.
  const visible = new Set(tree.data?.groups.map((g) => g.uuid));
  const groups = (tree.data?.groups ?? []).map((g) => (g.parent_group_uuid && !visible.has(g.parent_group_uuid) ? { ...g, parent_group_uuid: null } : g));
  const projects = (tree.data?.projects ?? []).map((p) => (p.parent_group_uuid && !visible.has(p.parent_group_uuid) ? { ...p, parent_group_uuid: null } : p));
  return (
    <>
      <div class="columns">
        <Section title="Groups and projects">
          <ErrorNote error={tree.error} />
          <Tree groups={groups} projects={projects} parent={null} selected={selected?.uuid} onSelect={setSelected} />
        </Section>
        {selected ? <ProjectDetails project={selected} /> : <Section title="Project"><p class="hint">Choose a project to see its members and edges.</p></Section>}
      </div>
      <UsersSection />
      <NewEdge />
    </>
  );
}
