// Edges on the organisation page: create one (its secret shown once) and rotate an edge's secret: a new
// secret is made (shown once), then every older one is deleted, so the old secret no longer gets a token.
// A super user manages every edge (/auth/edges), others their own (/auth/users/me/edges).
import { useState } from "preact/hooks";
import { api } from "../api";
import type { Me } from "../app";
import { ErrorNote, Section, ShownOnce, useAction } from "../common";
import { fmtTime } from "../format";
import { useLoad } from "../hooks";
import { ListHead, TextField } from "../fields";

export interface EdgeInfo {
  uuid: string;
  name: string;
  nickname: string;
  secrets: { id: number; name: string; secret: string; last_used_at: string | null; created_at: string }[];
}

export const edgesBase = (me: Me) => (me.is_super ? "/auth/edges" : "/auth/users/me/edges");

export function useEdges(me: Me) {
  return useLoad(() => api<{ items: EdgeInfo[] }>(`${edgesBase(me)}?per_page=200`).then((r) => r.items), [me.is_super]);
}

export function EdgesSection({ me }: { me: Me }) {
  const base = edgesBase(me);
  const edges = useEdges(me);
  const [name, setName] = useState("");
  const [secret, setSecret] = useState<{ label: string; value: string }>();
  const act = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      const edge = await api<{ uuid: string; name: string; client_secret?: string }>(base, {
        method: "POST",
        json: { name },
      });
      if (edge.client_secret)
        setSecret({ label: `Secret of edge ${edge.name} (client ID ${edge.uuid})`, value: edge.client_secret });
      setName("");
      edges.reload();
    });
  };
  const rotate = (edge: EdgeInfo) =>
    void act.run(async () => {
      const made = await api<{ id: number; secret: string }>(`${base}/${edge.uuid}/secrets`, {
        method: "POST",
        json: { name: `rotated ${new Date().toISOString()}` },
      });
      setSecret({ label: `New secret of edge ${edge.name} (client ID ${edge.uuid})`, value: made.secret });
      for (const old of edge.secrets)
        if (old.id !== made.id) await api(`${base}/${edge.uuid}/secrets/${old.id}`, { method: "DELETE" });
      edges.reload();
    });
  return (
    <Section title="Edges">
      <ErrorNote error={edges.error ?? act.error} />
      {secret && <ShownOnce label={secret.label} value={secret.value} onDone={() => setSecret(undefined)} />}
      <form class="inline" onSubmit={create} aria-label="New edge">
        <TextField label="Edge name" value={name} required onValue={setName} />
        <button type="submit" disabled={act.busy}>
          Create edge
        </button>
      </form>
      <table class="list" aria-label="Edges and their secrets">
        <ListHead columns={["Name", "Client ID", "Secrets"]} />
        <tbody>
          {edges.data?.map((e) => (
            <tr key={e.uuid}>
              <td>{e.nickname || e.name}</td>
              <td>
                <code>{e.uuid}</code>
              </td>
              <td>
                {e.secrets.map((s) => (
                  <div key={s.id}>
                    {s.name}, made {fmtTime(s.created_at)}, last used {fmtTime(s.last_used_at)}
                  </div>
                ))}
              </td>
              <td>
                <button
                  type="button"
                  aria-label={`Rotate the secret of ${e.name}`}
                  disabled={act.busy}
                  onClick={() => rotate(e)}
                >
                  Rotate secret
                </button>
              </td>
            </tr>
          ))}
          {edges.data?.length === 0 && (
            <tr>
              <td class="empty" colSpan={4}>
                No edges.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </Section>
  );
}
