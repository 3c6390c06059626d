// Measurements of a project: filters (edge, status, time range), paging, and a list that refreshes
// itself so running measurements show their growing point counts.
import { api, q } from "../api";
import type { Me } from "../app";
import { ErrorNote, Pager, ProjectPicker, Section, useProjects } from "../common";
import { DEFAULT_PROJECT, fmtCount, fmtDuration, fmtTime } from "../format";
import { go, useLoad } from "../hooks";

export interface Measurement {
  uuid: string;
  name: string;
  basetime: string;
  edge_uuid: string;
  duration: number;
  status: "measuring" | "resending" | "finished";
  processed_ratio: number;
  received_data_points: number;
  sequences: { expected_data_points?: number; received_chunks_ratio: number };
}

const PER_PAGE = 20;
const POLL_MS = 2000;

/** datetime-local text (local time) to RFC 3339, or undefined. */
const toRfc3339 = (local: string | null) => (local ? new Date(local).toISOString() : undefined);

export function useEdgeNames(project: string) {
  return useLoad(async () => {
    const names = new Map<string, string>();
    if (project === DEFAULT_PROJECT) return names;
    const r = await api<{ items: { edge_uuid: string; name: string; nickname: string }[] }>(
      `/auth/projects/${project}/edges?per_page=200`,
    ).catch(() => ({ items: [] }));
    for (const e of r.items) names.set(e.edge_uuid, e.nickname || e.name);
    return names;
  }, [project]);
}

export function MeasurementsPage({ me, query }: { me: Me; query: URLSearchParams }) {
  const projects = useProjects(me.is_super);
  const project = query.get("project") ?? projects.data?.[0]?.uuid;
  const page = Number(query.get("page") ?? "1");
  const filters = {
    edge: query.get("edge") ?? "",
    status: query.get("status") ?? "",
    start: query.get("start") ?? "",
    end: query.get("end") ?? "",
  };
  const set = (patch: Record<string, string | number>) => {
    const next = new URLSearchParams({
      ...Object.fromEntries(query),
      ...(project ? { project } : {}),
      page: "1",
      ...Object.fromEntries(Object.entries(patch).map(([k, v]) => [k, String(v)])),
    });
    for (const [k, v] of [...next]) if (v === "") next.delete(k);
    go(`#/measurements?${next}`);
  };
  const edges = useEdgeNames(project ?? DEFAULT_PROJECT);
  const list = useLoad(
    async () =>
      project
        ? api<{ items: Measurement[]; page: { total_count: number } }>(
            `/v1/projects/${project}/measurements${q({ edge_uuid: filters.edge, "status[]": filters.status ? [filters.status] : undefined, start: toRfc3339(filters.start), end: toRfc3339(filters.end), limit: PER_PAGE, page, sort: "base_time", order: "desc" })}`,
          )
        : undefined,
    [project, page, filters.edge, filters.status, filters.start, filters.end],
    { pollMs: POLL_MS },
  );
  return (
    <Section
      title="Measurements"
      actions={
        projects.data &&
        project && (
          <ProjectPicker projects={projects.data} value={project} onChange={(p) => go(`#/measurements?project=${p}`)} />
        )
      }
    >
      <ErrorNote error={projects.error ?? list.error} />
      <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Edge{" "}
          <select value={filters.edge} onChange={(e) => set({ edge: (e.target as HTMLSelectElement).value })}>
            <option value="">any</option>
            {[...(edges.data ?? new Map()).entries()].map(([uuid, name]) => (
              <option key={uuid} value={uuid}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status{" "}
          <select value={filters.status} onChange={(e) => set({ status: (e.target as HTMLSelectElement).value })}>
            <option value="">any</option>
            <option value="measuring">measuring</option>
            <option value="resending">resending</option>
            <option value="finished">finished</option>
          </select>
        </label>
        <label>
          From{" "}
          <input
            type="datetime-local"
            value={filters.start}
            onChange={(e) => set({ start: (e.target as HTMLInputElement).value })}
          />
        </label>
        <label>
          To{" "}
          <input
            type="datetime-local"
            value={filters.end}
            onChange={(e) => set({ end: (e.target as HTMLInputElement).value })}
          />
        </label>
      </form>
      <table class="list" aria-label="Measurements">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Edge</th>
            <th scope="col">Base time</th>
            <th scope="col">Duration</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Points received / expected
            </th>
            <th scope="col" class="num">
              Upload
            </th>
          </tr>
        </thead>
        <tbody>
          {list.data?.items.map((m) => (
            <tr key={m.uuid} data-status={m.status}>
              <td>
                <a href={`#/measurement/${project}/${m.uuid}`}>{m.name || m.uuid.slice(0, 8)}</a>
              </td>
              <td>{edges.data?.get(m.edge_uuid) ?? m.edge_uuid.slice(0, 8)}</td>
              <td class="nowrap">{fmtTime(m.basetime)}</td>
              <td class="nowrap">{fmtDuration(m.duration / 1e6)}</td>
              <td>
                <span class={`badge ${m.status}`}>{m.status}</span>
              </td>
              <td class="num">
                {fmtCount(m.received_data_points)} / {fmtCount(m.sequences.expected_data_points)}
              </td>
              <td class="num">
                {m.status === "measuring" ? (
                  <span class="receiving">receiving</span>
                ) : (
                  <>
                    <progress max={1} value={m.processed_ratio} aria-label="Upload progress" />{" "}
                    {Math.round(m.processed_ratio * 100)} %
                  </>
                )}
              </td>
            </tr>
          ))}
          {list.data?.items.length === 0 && (
            <tr>
              <td colSpan={7} class="empty">
                No measurements match.
              </td>
            </tr>
          )}
        </tbody>
      </table>
      {list.data && (
        <Pager page={page} total={list.data.page.total_count} perPage={PER_PAGE} onPage={(p) => set({ page: p })} />
      )}
    </Section>
  );
}
