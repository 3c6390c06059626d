// The signed-in user's account: the password, and the user's own API tokens (create, shown once; list; revoke).
import { useState } from "preact/hooks";
import { api } from "../api";
import type { Me } from "../app";
import { ErrorNote, Section, ShownOnce, useAction } from "../common";
import { fmtTime } from "../format";
import { useLoad } from "../hooks";
import { PasswordForm } from "./password";
import { ListHead, TextField } from "../fields";

interface Token {
  id: number;
  name: string;
  token?: string;
  created_at: string;
  expired_at?: string | null;
}

export function AccountPage({ me }: { me: Me }) {
  return (
    <>
      <PasswordSection />
      <TokensSection me={me} />
    </>
  );
}

function PasswordSection() {
  const [changed, setChanged] = useState(false);
  return (
    <Section title="Password">
      {changed && <p role="status">Password changed.</p>}
      <PasswordForm onChanged={() => setChanged(true)} />
    </Section>
  );
}

function TokensSection({ me }: { me: Me }) {
  const tokens = useLoad(() => api<{ items: Token[] }>("/auth/users/me/tokens?per_page=200").then((r) => r.items), []);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<Token>();
  const act = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      setCreated(await api<Token>("/auth/users/me/tokens", { method: "POST", json: { name } }));
      setName("");
      tokens.reload();
    });
  };
  const revoke = (t: Token) =>
    void act.run(async () => {
      await api(`/auth/users/me/tokens/${t.id}`, { method: "DELETE" });
      tokens.reload();
    });
  return (
    <Section title={`API tokens of ${me.name}`}>
      <ErrorNote error={tokens.error ?? act.error} />
      {created?.token && (
        <ShownOnce label={`New token "${created.name}"`} value={created.token} onDone={() => setCreated(undefined)} />
      )}
      <form class="inline" onSubmit={create} aria-label="New API token">
        <TextField label="Token name" value={name} required maxLength={256} onValue={setName} />
        <button type="submit" disabled={act.busy}>
          Create token
        </button>
      </form>
      <table class="list" aria-label="API tokens">
        <ListHead columns={["Name", "Created", "Expires"]} />
        <tbody>
          {tokens.data?.map((t) => (
            <tr key={t.id}>
              <td>{t.name}</td>
              <td>{fmtTime(t.created_at)}</td>
              <td>{fmtTime(t.expired_at)}</td>
              <td>
                <button type="button" onClick={() => revoke(t)} aria-label={`Revoke ${t.name}`}>
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}
