// A measurement's markers: the list (point or range, time after the base time, tags) and a form to add
// one, through the intdash marker operations.
import { useState } from "preact/hooks";
import { api } from "../api";
import { ErrorNote, Section, useAction } from "../common";
import { useLoad } from "../hooks";
import { ListHead } from "../fields";

interface Marker {
  uuid: string;
  name: string;
  description: string;
  type: "point" | "range";
  detail: { occurred_elapsed_time?: number; start_elapsed_time?: number; end_elapsed_time?: number };
  tag: Record<string, string>;
}

/** Seconds (as typed) to the API's microseconds. */
const toUs = (s: string) => Math.round(Number(s) * 1e6);
const secs = (us: number | undefined) => ((us ?? 0) / 1e6).toFixed(3);

/** `key=value, key2=value2` to a tag object; a key alone has an empty value. */
function parseTags(text: string): Record<string, string> {
  const tag: Record<string, string> = {};
  for (const part of text.split(",")) {
    const [k, ...v] = part.split("=");
    if (k!.trim()) tag[k!.trim()] = v.join("=").trim();
  }
  return tag;
}

export function MarkersPanel({ project, uuid }: { project: string; uuid: string }) {
  const base = `/v1/projects/${project}/measurements/${uuid}/markers`;
  const markers = useLoad(() => api<{ items: Marker[] }>(base).then((r) => r.items), [base]);
  const [name, setName] = useState("");
  const [type, setType] = useState<"point" | "range">("point");
  const [at, setAt] = useState("0");
  const [end, setEnd] = useState("0");
  const [tags, setTags] = useState("");
  const act = useAction();
  const add = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      const detail =
        type === "point"
          ? { occurred_elapsed_time: toUs(at) }
          : { start_elapsed_time: toUs(at), end_elapsed_time: toUs(end) };
      await api(base, { method: "POST", json: { name, type, detail, tag: parseTags(tags) } });
      setName("");
      setTags("");
      markers.reload();
    });
  };
  const remove = (k: Marker) =>
    void act.run(async () => {
      await api(`${base}/${k.uuid}`, { method: "DELETE" });
      markers.reload();
    });
  const field = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
  return (
    <Section title="Markers">
      <ErrorNote error={markers.error ?? act.error} />
      <form class="inline" onSubmit={add} aria-label="New marker">
        <label>
          Marker name <input value={name} maxLength={256} onInput={field(setName)} />
        </label>
        <label>
          Kind{" "}
          <select value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value as "point" | "range")}>
            <option value="point">point</option>
            <option value="range">range</option>
          </select>
        </label>
        <label>
          {type === "point" ? "At (s after base time)" : "From (s after base time)"}{" "}
          <input type="number" step="any" required value={at} onInput={field(setAt)} />
        </label>
        {type === "range" && (
          <label>
            To (s) <input type="number" step="any" required value={end} onInput={field(setEnd)} />
          </label>
        )}
        <label>
          Tags <input value={tags} placeholder="key=value, key2=value2" onInput={field(setTags)} />
        </label>
        <button type="submit" disabled={act.busy}>
          Add marker
        </button>
      </form>
      <table class="list" aria-label="Markers">
        <ListHead columns={["Name", "Kind", "Time (s)", "Tags"]} />
        <tbody>
          {markers.data?.map((k) => (
            <tr key={k.uuid}>
              <td>{k.name || "—"}</td>
              <td>{k.type}</td>
              <td class="time">
                {k.type === "point"
                  ? secs(k.detail.occurred_elapsed_time)
                  : `${secs(k.detail.start_elapsed_time)} – ${secs(k.detail.end_elapsed_time)}`}
              </td>
              <td>
                {Object.entries(k.tag)
                  .map(([key, v]) => (v ? `${key}=${v}` : key))
                  .join(", ")}
              </td>
              <td>
                <button
                  type="button"
                  disabled={act.busy}
                  onClick={() => remove(k)}
                  aria-label={`Delete marker ${k.name || k.uuid}`}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {markers.data?.length === 0 && <p class="hint">No markers yet.</p>}
    </Section>
  );
}
