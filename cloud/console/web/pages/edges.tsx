// Edges the user can see, whether each is connected to the broker now (per project), and its current
// (running) measurement, and the data rate the broker measures on its connection (last 5 s).
import { api } from "../api";
import type { Me } from "../app";
import { ErrorNote, Section, useProjects } from "../common";
import { fmtBytes, fmtCount, fmtTime } from "../format";
import { useLoad } from "../hooks";
import type { Measurement } from "./measurements";

interface Edge {
  uuid: string;
  name: string;
  nickname: string;
  created_at: string;
}

interface Rate {
  points_per_second: number;
  bytes_per_second: number;
}

interface Row {
  edge: Edge;
  rate?: Rate;
  project?: { uuid: string; name: string };
  running?: Measurement;
  transport?: string;
}

export function EdgesPage({ me }: { me: Me }) {
  const projects = useProjects(me.is_super);
  const rows = useLoad(
    async () => {
      const edges = (
        await api<{ items: Edge[] }>(me.is_super ? "/auth/edges?per_page=200" : "/auth/users/me/edges?per_page=200")
      ).items;
      const out = new Map<string, Row>(edges.map((e) => [e.uuid, { edge: e }]));
      const row = (uuid: string) =>
        out.get(uuid) ?? { edge: { uuid, name: uuid.slice(0, 8), nickname: "", created_at: "" } };
      // Per project: the broker's open connections, and the running measurements.
      for (const p of projects.data ?? []) {
        const [conns, running] = await Promise.all([
          api<{ items: { edge_uuid: string; transport: string; data_rate: Rate }[] }>(
            `/v1/projects/${p.uuid}/edge_connections`,
          ).catch(() => ({ items: [] })),
          api<{ items: Measurement[] }>(`/v1/projects/${p.uuid}/measurements?status[]=measuring&limit=100`).catch(
            () => ({ items: [] }),
          ),
        ]);
        for (const c of conns.items)
          out.set(c.edge_uuid, { ...row(c.edge_uuid), transport: c.transport, rate: c.data_rate });
        for (const m of running.items) out.set(m.edge_uuid, { ...row(m.edge_uuid), project: p, running: m });
      }
      return [...out.values()];
    },
    [projects.data],
    { pollMs: 3000 },
  );
  return (
    <Section title="Edges">
      <ErrorNote error={rows.error ?? projects.error} />
      <table class="list" aria-label="Edges">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Connected</th>
            <th scope="col">Now</th>
            <th scope="col" class="num">
              Data rate
            </th>
            <th scope="col">Current measurement</th>
            <th scope="col" class="num">
              Points
            </th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {rows.data?.map(({ edge, project, running, transport, rate }) => (
            <tr key={edge.uuid}>
              <td>{edge.nickname || edge.name}</td>
              <td>
                <span class={`badge ${transport ? "connected" : "idle"}`}>
                  {transport ? `connected (${transport})` : "offline"}
                </span>
              </td>
              <td>
                <span class={`badge ${running ? "measuring" : "idle"}`}>{running ? "measuring" : "idle"}</span>
              </td>
              <td class="num" data-testid="rate">
                {rate ? fmtRate(rate) : "—"}
              </td>
              <td>
                {running && project ? (
                  <a href={`#/measurement/${project.uuid}/${running.uuid}`}>
                    {running.name || fmtTime(running.basetime)}
                  </a>
                ) : (
                  "—"
                )}
              </td>
              <td class="num">{fmtCount(running?.received_data_points)}</td>
              <td>{fmtTime(edge.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

const fmtRate = (r: Rate) => `${fmtCount(Math.round(r.points_per_second))} pt/s, ${fmtBytes(r.bytes_per_second)}/s`;
