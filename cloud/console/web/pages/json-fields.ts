// The numeric fields of JSON data (json, or string payloads holding JSON objects), found in the first
// points of each such data ID, as JSON pointers (`/acc/x`) the reduced-series endpoint plots by.
import { fromBase64 } from "../format";
import { useLoad } from "../hooks";
import { fetchPoints, parseNdjson } from "../values";

/** A series the plot can show: a numeric data ID, or one numeric field of a JSON data ID. */
export interface Plottable {
  data_type: string;
  data_id: string;
  /** JSON pointer of the field; absent for numeric types. */
  field?: string;
}

export const plotKey = (p: Plottable) => `${p.data_type}:${p.data_id}${p.field ?? ""}`;
export const plotLabel = (p: Plottable) => (p.field === undefined ? p.data_id : `${p.data_id} ${p.field}`);

const SAMPLED = 20;
const MAX_FIELDS = 16;
const MAX_DEPTH = 4;
const utf8 = new TextDecoder();

const escapeToken = (k: string) => k.replace(/~/g, "~0").replace(/\//g, "~1");

/** JSON pointers of the numeric leaves of `v`, in document order, depth and count bounded. */
export function numericPointers(v: unknown, out: Set<string>, prefix = "", depth = 0): void {
  if (out.size >= MAX_FIELDS || depth > MAX_DEPTH || v === null || typeof v !== "object") return;
  for (const [k, child] of Object.entries(v)) {
    const pointer = `${prefix}/${escapeToken(k)}`;
    if (typeof child === "number" && Number.isFinite(child)) out.add(pointer);
    else numericPointers(child, out, pointer, depth + 1);
    if (out.size >= MAX_FIELDS) return;
  }
}

const isJsonType = (t: string) => t === "json" || t === "string";

/** The numeric fields of each JSON data ID, from its first points (looked up again when the IDs change). */
export function useJsonFields(project: string, uuid: string, ids: Plottable[]) {
  const json = ids.filter((d) => isJsonType(d.data_type));
  return useLoad(async () => {
    const found: Plottable[] = [];
    for (const d of json) {
      const points = parseNdjson(
        await fetchPoints(project, uuid, { idq: `${d.data_type}:${d.data_id}`, limit: SAMPLED }),
      );
      const fields = new Set<string>();
      for (const p of points) {
        try {
          numericPointers(JSON.parse(utf8.decode(fromBase64(p.data.d ?? ""))), fields);
        } catch {
          // Not JSON: no fields from this point.
        }
      }
      for (const field of fields) found.push({ data_type: d.data_type, data_id: d.data_id, field });
    }
    return found;
  }, [project, uuid, json.map(plotKey).join("|")]);
}
