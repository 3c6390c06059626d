// How agentctl prints: aligned tables for people, JSON or YAML for scripts.
import YAML from "yaml";

export type Format = "table" | "json" | "yaml";

/** What agentctl prints instead of a secret unless --show-secrets is given (a fixed length: it tells nothing). */
export const SECRET_MASK = "********";
const SECRET_KEYS = new Set(["client_secret"]);

/** A copy of `value` with every set secret replaced by the mask; an empty secret ("not set") stays empty. */
export function maskSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      SECRET_KEYS.has(k) && typeof v === "string" && v !== "" ? SECRET_MASK : maskSecrets(v),
    ]),
  );
}

const cell = (v: unknown): string => {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.join(",");
  return typeof v === "object" ? JSON.stringify(v) : String(v);
};

/** Rows as a table with upper-case headers (columns: the union of keys, in first-seen order). */
export function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return "(none)\n";
  const cols: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
  const cells = [cols.map((c) => c.toUpperCase()), ...rows.map((r) => cols.map((c) => cell(r[c])))];
  const widths = cols.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return (
    cells.map((row) => row.map((v, i) => (i === row.length - 1 ? v : v.padEnd(widths[i]!))).join("  ")).join("\n") +
    "\n"
  );
}

/** One object as KEY  VALUE lines. */
export function keyValues(obj: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(obj).map((k) => k.length));
  return (
    Object.entries(obj)
      .map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`)
      .join("\n") + "\n"
  );
}

export function render(value: unknown, format: Format): string {
  if (format === "json") return JSON.stringify(value, null, 2) + "\n";
  if (format === "yaml") return YAML.stringify(value);
  if (value === undefined) return "";
  if (Array.isArray(value)) return table(value as Record<string, unknown>[]);
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (Array.isArray(o.items) && Object.keys(o).length === 1) return table(o.items as Record<string, unknown>[]);
    return keyValues(o);
  }
  return String(value) + "\n";
}
