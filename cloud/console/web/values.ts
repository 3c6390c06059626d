// Data points as the data endpoint streams them (NDJSON, payload base64), decoded for display and CSV:
// numeric types are big-endian (iSCP v2), string and json are UTF-8 text, anything else is shown as hex.
import { apiFetch } from "./api";
import { fromBase64, hex } from "./format";

/** One line of the data endpoint's NDJSON. */
export interface DataRow {
  time: string;
  data_type: string;
  data_id: string;
  data_name?: string;
  data: { d?: string } & Record<string, unknown>;
}

const FIXED: Record<string, [number, (v: DataView) => number | bigint]> = {
  float64: [8, (v) => v.getFloat64(0)],
  float32: [4, (v) => v.getFloat32(0)],
  int64: [8, (v) => v.getBigInt64(0)],
  uint64: [8, (v) => v.getBigUint64(0)],
  int32: [4, (v) => v.getInt32(0)],
  uint32: [4, (v) => v.getUint32(0)],
  int16: [2, (v) => v.getInt16(0)],
  uint16: [2, (v) => v.getUint16(0)],
  int8: [1, (v) => v.getInt8(0)],
  uint8: [1, (v) => v.getUint8(0)],
};

/** Types the reduced-series endpoint plots. */
export const isNumericType = (t: string) => t in FIXED || t === "json";

const utf8 = new TextDecoder();
// C0 controls other than tab, line feed and carriage return; DEL; the replacement character of invalid UTF-8.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what it is for
const NOT_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/;

/** The point's value as text: a number, the text of string/json, or hex bytes. */
export function valueText(p: DataRow, maxBytes = 64): string {
  if (p.data.d === undefined) return JSON.stringify(p.data);
  const bytes = fromBase64(p.data.d);
  const fixed = FIXED[p.data_type];
  if (fixed && bytes.length === fixed[0]) return String(fixed[1](new DataView(bytes.buffer)));
  if (p.data_type === "string" || p.data_type === "json") {
    const text = utf8.decode(bytes);
    // A string of binary data (control characters, bytes that are not UTF-8) reads as hex, not as boxes.
    if (!NOT_TEXT.test(text)) return text;
  }
  return hex(bytes, maxBytes);
}

export function parseNdjson(text: string): DataRow[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as DataRow)
    .filter((p) => p.data_type !== undefined);
}

/** The data endpoint's NDJSON for a measurement (optionally one data ID, a limit). */
export async function fetchPoints(
  project: string,
  meas: string,
  opts: { idq?: string; limit?: number } = {},
): Promise<string> {
  const s = new URLSearchParams({ name: meas, time_format: "rfc3339" });
  if (opts.idq) s.append("idq[]", opts.idq);
  if (opts.limit) s.set("limit", String(opts.limit));
  const r = await apiFetch(`/v1/projects/${project}/data?${s}`);
  if (!r.ok) throw new Error(`the data endpoint answered ${r.status}`);
  return r.text();
}

const csvCell = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

export function toCsv(points: DataRow[]): string {
  const lines = ["time,data_type,data_id,data_name,value"];
  for (const p of points)
    lines.push(
      [p.time, p.data_type, p.data_id, p.data_name ?? p.data_id, valueText(p, Number.MAX_SAFE_INTEGER)]
        .map(csvCell)
        .join(","),
    );
  return `${lines.join("\n")}\n`;
}

/** Saves text as a file through a temporary object URL. */
export function saveFile(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
