// A project's webhooks (intdash project webhook operations): the hooks with their state, a form to add
// one (the generated secret shown once), test / enable / disable / delete, and the latest deliveries.
// Shown only to a user the peer lets create hooks.
import { useState } from "preact/hooks";
import { useAllowed } from "../allowed";
import { api } from "../api";
import { ErrorNote, ShownOnce, useAction } from "../common";
import { fmtTime } from "../format";
import { useLoad } from "../hooks";
import { ListHead, TextField } from "../fields";

interface Hook {
  uuid: string;
  url: string;
  measurements_event: boolean;
  enabled: boolean;
  secret?: string;
}

interface Delivery {
  uuid: string;
  hook_uuid: string;
  status: string;
  reason: string;
  is_test: boolean;
  attempts: number;
  request?: { body?: string };
  created_at: string;
}

const actionOf = (d: Delivery) => {
  try {
    return String((JSON.parse(d.request?.body ?? "{}") as { action?: string }).action ?? "");
  } catch {
    return "";
  }
};

export function Webhooks({ project }: { project: string }) {
  const base = `/projects/${project}`;
  const allowed = useAllowed("POST", `${base}/hooks`);
  const hooks = useLoad(
    () => (allowed ? api<{ items: Hook[] }>(`${base}/hooks?per_page=200`).then((r) => r.items) : Promise.resolve([])),
    [base, allowed],
  );
  const deliveries = useLoad(
    () =>
      allowed
        ? api<{ items: Delivery[] }>(`${base}/hook_deliveries?per_page=10`).then((r) => r.items)
        : Promise.resolve([]),
    [base, allowed],
  );
  const [url, setUrl] = useState("");
  const [created, setCreated] = useState<Hook>();
  const act = useAction();
  if (!allowed) return null;
  const reload = () => (hooks.reload(), deliveries.reload());
  const add = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      setCreated(await api<Hook>(`${base}/hooks`, { method: "POST", json: { url, measurements_events: true } }));
      setUrl("");
      reload();
    });
  };
  const call = (h: Hook, method: string, path: string) =>
    void act.run(async () => {
      await api(`${base}/hooks/${h.uuid}${path}`, { method, ...(path === "/test" ? { json: {} } : {}) });
      reload();
    });
  return (
    <>
      <h3>Webhooks</h3>
      <p class="hint">
        Each hook gets a signed POST when one of the project's measurements is created, changed, ended, completed or
        deleted.
      </p>
      <ErrorNote error={hooks.error ?? deliveries.error ?? act.error} />
      {created?.secret && (
        <ShownOnce
          label={`Signing secret of the webhook to ${created.url}`}
          value={created.secret}
          onDone={() => setCreated(undefined)}
        />
      )}
      <form class="inline" onSubmit={add} aria-label="New webhook">
        <TextField label="Webhook URL" type="url" value={url} required maxLength={2048} onValue={setUrl} />
        <button type="submit" disabled={act.busy}>
          Add webhook
        </button>
      </form>
      <table class="list" aria-label="Webhooks">
        <ListHead columns={["URL", "State"]} />
        <tbody>
          {hooks.data?.map((h) => (
            <tr key={h.uuid}>
              <td>
                <code>{h.url}</code>
              </td>
              <td>{h.enabled ? "enabled" : "disabled"}</td>
              <td>
                <button
                  type="button"
                  disabled={act.busy}
                  onClick={() => call(h, "PUT", "/test")}
                  aria-label={`Test webhook ${h.url}`}
                >
                  Test
                </button>{" "}
                <button
                  type="button"
                  disabled={act.busy}
                  onClick={() => call(h, "PUT", h.enabled ? "/disable" : "/enable")}
                >
                  {h.enabled ? "Disable" : "Enable"}
                </button>{" "}
                <button
                  type="button"
                  disabled={act.busy}
                  onClick={() => call(h, "DELETE", "")}
                  aria-label={`Delete webhook ${h.url}`}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {hooks.data?.length === 0 && <p class="hint">No webhooks.</p>}
      <table class="list" aria-label="Latest webhook deliveries">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Action</th>
            <th scope="col">Status</th>
            <th scope="col">Tries</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.data?.map((d) => (
            <tr key={d.uuid} title={d.reason}>
              <td>{fmtTime(d.created_at)}</td>
              <td>
                {actionOf(d)}
                {d.is_test ? " (test)" : ""}
              </td>
              <td>
                {d.status}
                {d.reason ? `: ${d.reason}` : ""}
              </td>
              <td>{d.attempts}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" onClick={reload}>
        Refresh deliveries
      </button>
    </>
  );
}
