// Non-numeric data (strings, JSON, bytes as hex) in a table of its first points, and downloads of
// the whole measurement as NDJSON (what the data endpoint sends) or CSV (decoded values).
import { useState } from "preact/hooks";
import { ErrorNote, Section } from "../common";
import { useLoad } from "../hooks";
import { fetchPoints, parseNdjson, saveFile, toCsv, valueText } from "../values";

const SHOWN = 50;

export function DataTable({ project, uuid, dataType, dataId, refresh }: { project: string; uuid: string; dataType: string; dataId: string; refresh: number }) {
  const rows = useLoad(() => fetchPoints(project, uuid, { idq: `${dataType}:${dataId}`, limit: SHOWN }).then(parseNdjson), [project, uuid, dataType, dataId, Math.floor(refresh / 5)]);
  return (
    <Section title={`${dataId} (${dataType})`}>
      <ErrorNote error={rows.error} />
      <table class="list data" aria-label={`Data of ${dataId}`}>
        <thead>
          <tr><th scope="col">Time</th><th scope="col">Value{dataType === "string" || dataType === "json" ? "" : " (hex)"}</th></tr>
        </thead>
        <tbody>
          {rows.data?.map((p, i) => (
            <tr key={i}>
              <td class="time">{p.time}</td>
              <td class="value"><code>{valueText(p)}</code></td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.data?.length === SHOWN && <p class="hint">The first {SHOWN} points; download the measurement for all of them.</p>}
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
      <button type="button" disabled={busy} onClick={() => void download("ndjson")}>Download NDJSON</button>
      <button type="button" disabled={busy} onClick={() => void download("csv")}>Download CSV</button>
      <ErrorNote error={error} />
    </div>
  );
}
