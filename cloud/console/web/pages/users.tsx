// Users (for those allowed to manage them): create (the temporary password is shown once), disable
// and enable, reset the password to a temporary one, unlock after failed attempts.
import { useState } from "preact/hooks";
import { api } from "../api";
import { useAllowed } from "../allowed";
import { ErrorNote, Section, ShownOnce, useAction } from "../common";
import { fmtTime } from "../format";
import { useLoad } from "../hooks";
import { ListHead, TextField } from "../fields";

interface User {
  uuid: string;
  name: string;
  disabled: boolean;
  is_super: boolean;
  roles: string[];
  last_sign_in_at: string | null;
  password?: { temporary_password?: string; attempt_count: number };
}

export function UsersSection() {
  const users = useLoad(() => api<{ items: User[] }>("/auth/users?per_page=200").then((r) => r.items), []);
  const roles = useLoad(
    () => api<{ items: { uuid: string; name: string }[] }>("/auth/roles?per_page=200").then((r) => r.items),
    [],
  );
  const [name, setName] = useState("");
  const [role, setRole] = useState("");
  const [secret, setSecret] = useState<{ label: string; value: string }>();
  const act = useAction();
  const canManage = useAllowed("POST", "/auth/users"); // else the list is read-only
  if (users.error) return null; // not allowed to manage users: the section is left out
  const defaultRole = roles.data?.find((r) => r.name === "member")?.uuid ?? "";
  const roleName = (uuid: string) => roles.data?.find((r) => r.uuid === uuid)?.name ?? uuid.slice(0, 8);
  const create = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      const chosen = role || defaultRole;
      const u = await api<User>("/auth/users", { method: "POST", json: { name, role_uuids: chosen ? [chosen] : [] } });
      if (u.password?.temporary_password)
        setSecret({ label: `Temporary password of ${u.name}`, value: u.password.temporary_password });
      setName("");
      users.reload();
    });
  };
  const call = (path: string, method = "PUT", show?: string) =>
    void act.run(async () => {
      const r = await api<{ temporary_password?: string }>(path, { method });
      if (show && r?.temporary_password) setSecret({ label: show, value: r.temporary_password });
      users.reload();
    });
  return (
    <Section title="Users">
      <ErrorNote error={act.error} />
      {secret && <ShownOnce label={secret.label} value={secret.value} onDone={() => setSecret(undefined)} />}
      {canManage && (
        <form class="inline" onSubmit={create} aria-label="New user">
          <TextField label="User name" value={name} required onValue={setName} />
          <label>
            Role{" "}
            <select value={role || defaultRole} onChange={(e) => setRole((e.target as HTMLSelectElement).value)}>
              {roles.data?.map((r) => (
                <option key={r.uuid} value={r.uuid}>
                  {r.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={act.busy || !roles.data}>
            Create user
          </button>
        </form>
      )}
      <table class="list" aria-label="Users">
        <ListHead columns={["Name", "Roles", "State", "Last sign-in"]} actions={!!canManage} />
        <tbody>
          {users.data?.map((u) => (
            <tr key={u.uuid}>
              <td>{u.name}</td>
              <td>{u.roles.map(roleName).join(", ")}</td>
              <td>{u.disabled ? "disabled" : "active"}</td>
              <td>{fmtTime(u.last_sign_in_at)}</td>
              {canManage && (
                <td class="actions">
                  <button
                    type="button"
                    onClick={() => call(`/auth/users/${u.uuid}/${u.disabled ? "enable" : "disable"}`)}
                  >
                    {u.disabled ? "Enable" : "Disable"}
                  </button>
                  <button
                    type="button"
                    onClick={() => call(`/auth/users/${u.uuid}/password`, "PUT", `Temporary password of ${u.name}`)}
                  >
                    Reset password
                  </button>
                  <button type="button" onClick={() => call(`/auth/users/${u.uuid}/password/unlock`)}>
                    Unlock
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}
