// What the demo creates in the cloud through its public API: a group, a project, an edge in it.
// The result is kept in <data>/demo.json so a second `npm start` reuses it (a secret is shown once).
import fs from "node:fs";
import path from "node:path";

export interface DemoState {
  projectUuid: string;
  edgeUuid: string;
  edgeSecret: string;
}

type Api = (p: string, init?: { method?: string; json?: unknown }) => Promise<any>;

export function apiClient(baseUrl: string, token: string): Api {
  return async (p, init = {}) => {
    const res = await fetch(`${baseUrl}/api${p}`, {
      method: init.method ?? "GET",
      headers: { "X-Intdash-Token": token, ...(init.json ? { "content-type": "application/json" } : {}) },
      body: init.json ? JSON.stringify(init.json) : undefined,
    });
    const body = await res.text();
    if (res.status >= 400) throw new Error(`${init.method ?? "GET"} ${p}: ${res.status} ${body}`);
    return body ? JSON.parse(body) : undefined;
  };
}

export async function ensureDemoCloud(dataDir: string, api: Api): Promise<DemoState> {
  const file = path.join(dataDir, "demo.json");
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, "utf8")) as DemoState;
  const group = await api("/auth/groups", { method: "POST", json: { name: "demo" } });
  const project = await api(`/auth/groups/${group.uuid}/projects`, { method: "POST", json: { name: "demo" } });
  const edge = await api("/auth/edges", { method: "POST", json: { name: "demo-edge", nickname: "Demo edge" } });
  await api(`/auth/projects/${project.uuid}/edges`, {
    method: "POST",
    json: { edge_name: edge.name, nickname: "Demo edge" },
  });
  const state: DemoState = { projectUuid: project.uuid, edgeUuid: edge.uuid, edgeSecret: edge.client_secret };
  fs.writeFileSync(file, JSON.stringify(state, null, 2), { mode: 0o600 });
  return state;
}
