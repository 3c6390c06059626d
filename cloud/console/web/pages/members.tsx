// Members of a group or project with their roles and owners (intdash REST API: list/add/update/remove
// GroupMember and ProjectMember, add/remove the owner attribute). The controls are shown to users whose
// roles in that group or project allow changing members; the server guards every change.
import { useState } from "preact/hooks";
import { api } from "../api";
import { useAllowed } from "../allowed";
import { ErrorNote, useAction } from "../common";
import { useLoad } from "../hooks";
import { ListHead } from "../fields";

interface Member {
  user_uuid: string;
  name: string;
  is_owner: boolean;
  role_uuids: string[];
  inherited_role_uuids: string[];
}

interface Role {
  uuid: string;
  name: string;
}

// `owner` is held through the owner attribute, never assigned; `edge` is for devices.
const NOT_ASSIGNED = new Set(["owner", "edge"]);

const selected = (e: Event) => (e.target as HTMLSelectElement).value;

/** `base` is the group's or project's path, e.g. `/auth/projects/{uuid}`. */
export function Members({ base, title }: { base: string; title: string }) {
  const members = useLoad(() => api<{ items: Member[] }>(`${base}/members?per_page=200`).then((r) => r.items), [base]);
  const roles = useLoad(() => api<{ items: Role[] }>("/auth/roles?per_page=200").then((r) => r.items), []);
  const canEdit = useAllowed("POST", `${base}/members`);
  const act = useAction();
  const roleName = (uuid: string) => roles.data?.find((r) => r.uuid === uuid)?.name ?? uuid.slice(0, 8);
  const assignable = (roles.data ?? []).filter((r) => !NOT_ASSIGNED.has(r.name));
  const change = (fn: () => Promise<unknown>) =>
    void act.run(async () => {
      try {
        await fn();
      } finally {
        members.reload(); // a refused change too: show what the server holds now
      }
    });
  const memberPath = (m: Member) => `${base}/members/${m.user_uuid}`;
  const setRole = (m: Member, role: string) =>
    change(() => api(memberPath(m), { method: "PATCH", json: { role_uuids: role ? [role] : [] } }));
  const setOwner = (m: Member, owner: boolean) =>
    change(() => api(`${memberPath(m)}/owner`, { method: owner ? "PUT" : "DELETE" }));
  const remove = (m: Member) => change(() => api(memberPath(m), { method: "DELETE" }));
  return (
    <>
      <h3>Members</h3>
      <ErrorNote error={members.error ?? act.error} />
      <table class="list" aria-label={`Members of ${title}`} data-can-edit={String(canEdit ?? "asking")}>
        <ListHead columns={["Name", "Roles", "Owner"]} actions={!!canEdit} />
        <tbody>
          {members.data?.map((m) => (
            <tr key={m.user_uuid} data-testid="member">
              <td>{m.name}</td>
              <td>
                {canEdit ? (
                  <select
                    aria-label={`Role of ${m.name}`}
                    value={m.role_uuids[0] ?? ""}
                    disabled={act.busy}
                    onChange={(e) => setRole(m, selected(e))}
                  >
                    <option value="">(no role)</option>
                    {assignable.map((r) => (
                      <option key={r.uuid} value={r.uuid}>
                        {r.name}
                      </option>
                    ))}
                  </select>
                ) : (
                  <span class="roles">{m.role_uuids.map(roleName).join(", ") || "—"}</span>
                )}
                {m.inherited_role_uuids.length > 0 && (
                  <span class="hint"> inherited: {m.inherited_role_uuids.map(roleName).join(", ")}</span>
                )}
              </td>
              <td>
                {canEdit ? (
                  <input
                    type="checkbox"
                    aria-label={`${m.name} is an owner`}
                    checked={m.is_owner}
                    disabled={act.busy}
                    onChange={(e) => setOwner(m, (e.target as HTMLInputElement).checked)}
                  />
                ) : m.is_owner ? (
                  "owner"
                ) : (
                  ""
                )}
              </td>
              {canEdit && (
                <td>
                  <button type="button" aria-label={`Remove ${m.name}`} disabled={act.busy} onClick={() => remove(m)}>
                    Remove
                  </button>
                </td>
              )}
            </tr>
          ))}
          {members.data?.length === 0 && (
            <tr>
              <td class="empty" colSpan={4}>
                No members.
              </td>
            </tr>
          )}
        </tbody>
      </table>
      {canEdit && <AddMember base={base} members={members.data ?? []} roles={assignable} onAdded={members.reload} />}
    </>
  );
}

function AddMember({
  base,
  members,
  roles,
  onAdded,
}: {
  base: string;
  members: Member[];
  roles: Role[];
  onAdded(): void;
}) {
  const users = useLoad(
    () => api<{ items: { uuid: string; name: string }[] }>("/auth/users?per_page=200").then((r) => r.items),
    [],
  );
  const [user, setUser] = useState("");
  const [role, setRole] = useState<string>();
  const act = useAction();
  const candidates = (users.data ?? []).filter((u) => !members.some((m) => m.user_uuid === u.uuid));
  const chosenUser = candidates.some((u) => u.uuid === user) ? user : (candidates[0]?.uuid ?? "");
  const chosenRole = role ?? roles.find((r) => r.name === "member")?.uuid ?? "";
  const add = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      await api(`${base}/members`, {
        method: "POST",
        json: { user_uuid: chosenUser, role_uuids: chosenRole ? [chosenRole] : [] },
      });
      setUser("");
      onAdded();
    });
  };
  if (users.data && candidates.length === 0) return <p class="hint">Every user is a member already.</p>;
  return (
    <form class="inline" onSubmit={add} aria-label="Add a member">
      <ErrorNote error={users.error ?? act.error} />
      <label>
        User{" "}
        <select aria-label="User" value={chosenUser} onChange={(e) => setUser(selected(e))}>
          {candidates.map((u) => (
            <option key={u.uuid} value={u.uuid}>
              {u.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Role{" "}
        <select aria-label="Role" value={chosenRole} onChange={(e) => setRole(selected(e))}>
          <option value="">(no role)</option>
          {roles.map((r) => (
            <option key={r.uuid} value={r.uuid}>
              {r.name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={act.busy || !chosenUser}>
        Add member
      </button>
    </form>
  );
}
