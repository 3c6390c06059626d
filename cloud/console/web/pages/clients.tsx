// The signed-in user's own OAuth2 clients (intdash REST API: listMyOAuth2Clients, createMyOAuth2Clients,
// deleteMyOAuth2Client): the list never holds secrets; a new client's secret is shown once.
import { useState } from "preact/hooks";
import { api } from "../api";
import type { Me } from "../app";
import { ErrorNote, Section, ShownOnce, useAction } from "../common";
import { fmtTime } from "../format";
import { useLoad } from "../hooks";
import { ListHead, TextField } from "../fields";

interface Client {
  client_id: string;
  name: string;
  grant_types: string[];
  token_endpoint_auth_method: string;
  redirect_uris: string[];
  created_at: string;
  client_secret?: string;
}

type Grant = "authorization_code" | "client_credentials";

export function ClientsPage({ me }: { me: Me }) {
  const clients = useLoad(
    () => api<{ items: Client[] }>("/auth/users/me/clients?per_page=200").then((r) => r.items),
    [],
  );
  const [name, setName] = useState("");
  const [grant, setGrant] = useState<Grant>("client_credentials");
  const [redirect, setRedirect] = useState("");
  const [created, setCreated] = useState<Client>();
  const act = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      const json = {
        name,
        grant_type: grant,
        ...(grant === "authorization_code" ? { redirect_uris: [redirect] } : {}),
      };
      setCreated(await api<Client>("/auth/users/me/clients", { method: "POST", json }));
      setName("");
      setRedirect("");
      clients.reload();
    });
  };
  const remove = (c: Client) =>
    void act.run(async () => {
      await api(`/auth/users/me/clients/${encodeURIComponent(c.client_id)}`, { method: "DELETE" });
      if (created?.client_id === c.client_id) setCreated(undefined);
      clients.reload();
    });
  return (
    <Section title={`OAuth2 clients of ${me.name}`}>
      <p class="hint">
        Applications that sign in at this peer's OAuth 2.0 server as you (authorization code) or as themselves with your
        rights (client credentials).
      </p>
      <ErrorNote error={clients.error ?? act.error} />
      {created?.client_secret && (
        <ShownOnce
          label={`Secret of client "${created.name}" (client ID ${created.client_id})`}
          value={created.client_secret}
          onDone={() => setCreated(undefined)}
        />
      )}
      <form class="inline" onSubmit={create} aria-label="New OAuth2 client">
        <TextField label="Client name" value={name} required maxLength={256} onValue={setName} />
        <label>
          Grant type{" "}
          <select value={grant} onChange={(e) => setGrant((e.target as HTMLSelectElement).value as Grant)}>
            <option value="client_credentials">client credentials</option>
            <option value="authorization_code">authorization code</option>
          </select>
        </label>
        {grant === "authorization_code" && (
          <TextField label="Redirect URI" type="url" value={redirect} required maxLength={256} onValue={setRedirect} />
        )}
        <button type="submit" disabled={act.busy}>
          Create client
        </button>
      </form>
      <table class="list" aria-label="OAuth2 clients">
        <ListHead columns={["Name", "Client ID", "Grant type", "Redirect URIs", "Created"]} />
        <tbody>
          {clients.data?.map((c) => (
            <tr key={c.client_id}>
              <td>{c.name}</td>
              <td>
                <code>{c.client_id}</code>
              </td>
              <td>{c.grant_types.map((g) => g.replace("_", " ")).join(", ")}</td>
              <td>{c.redirect_uris.join(", ") || "—"}</td>
              <td>{fmtTime(c.created_at)}</td>
              <td>
                <button type="button" onClick={() => remove(c)} aria-label={`Delete ${c.name}`}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
          {clients.data?.length === 0 && (
            <tr>
              <td class="empty" colSpan={6}>
                No clients yet.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </Section>
  );
}
