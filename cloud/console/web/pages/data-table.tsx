// Non-numeric data (strings, JSON, bytes as hex) in a searchable table of its first points, and downloads of
// the whole measurement as NDJSON (what the data endpoint sends) or CSV (decoded values).
import { useState } from "preact/hooks";
import { ErrorNote, Section } from "../common";
import { useLoad } from "../hooks";
import { fetchPoints, parseNdjson, saveFile, toCsv, valueText } from "../values";
import { TextField } from "../fields";

const SHOWN = 50;
/** Points searched: the first of the measurement's points of this data ID. */
const SEARCHED = 2000;

/**
 * Non-numeric data: text where it is text, hex where it is not, with a search over the values (a log line, a
 * CAN frame's bytes).
 */
export function DataTable({
  project,
  uuid,
  dataType,
  dataId,
  refresh,
  name,
}: {
  project: string;
  uuid: string;
  dataType: string;
  dataId: string;
  refresh: number;
  /** The data ID's display name, where it has one. */
  name?: string;
}) {
  const rows = useLoad(
    () => fetchPoints(project, uuid, { idq: `${dataType}:${dataId}`, limit: SEARCHED }).then(parseNdjson),
    [project, uuid, dataType, dataId, Math.floor(refresh / 5)],
  );
  const [search, setSearch] = useState("");
  const needle = search.trim().toLowerCase();
  const all = (rows.data ?? []).map((p) => ({ time: p.time, text: valueText(p) }));
  const matching = needle ? all.filter((r) => r.text.toLowerCase().includes(needle)) : all;
  const shown = matching.slice(0, SHOWN);
  return (
    <Section title={name && name !== dataId ? `${name} (${dataId}, ${dataType})` : `${dataId} (${dataType})`}>
      <ErrorNote error={rows.error} />
      <form class="inline" role="search" aria-label={`Search ${dataId}`} onSubmit={(e) => e.preventDefault()}>
        <TextField label="Search" type="search" value={search} onValue={setSearch} />
        {needle && (
          <span class="hint">
            {matching.length} of {all.length} points match
          </span>
        )}
      </form>
      <table class="list data" aria-label={`Data of ${dataId}`}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Value{dataType === "string" || dataType === "json" ? "" : " (hex)"}</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((r, i) => (
            <tr key={i}>
              <td class="time">{r.time}</td>
              <td class="value">
                <code>{r.text}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {matching.length > SHOWN && (
        <p class="hint">
          The first {SHOWN} of {matching.length}; narrow the search, or download the measurement for all points.
        </p>
      )}
      {!needle && all.length === SEARCHED && <p class="hint">Search looks at the first {SEARCHED} points.</p>}
    </Section>
  );
}

export function Downloads({ project, uuid, name }: { project: string; uuid: string; name: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  const download = async (kind: "ndjson" | "csv") => {
    setBusy(true);
    setError(undefined);
    try {
      const text = await fetchPoints(project, uuid);
      const safe = name.replace(/[^\w.-]+/g, "_");
      if (kind === "ndjson") saveFile(`${safe}.ndjson`, text, "application/x-ndjson");
      else saveFile(`${safe}.csv`, toCsv(parseNdjson(text)), "text/csv");
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="toolbar">
      <button type="button" disabled={busy} onClick={() => void download("ndjson")}>
        Download NDJSON
      </button>
      <button type="button" disabled={busy} onClick={() => void download("csv")}>
        Download CSV
      </button>
      <ErrorNote error={error} />
    </div>
  );
}
