// Display helpers: times, durations, counts, bytes as hex.

export const fmtTime = (iso: string | undefined | null) =>
  iso ? new Date(iso).toLocaleString(undefined, { hour12: false }) : "—";

/** Seconds (a float) as `1 h 02 min 03.4 s`. */
export function fmtDuration(s: number): string {
  if (!Number.isFinite(s) || s < 0) return "—";
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const secText = `${sec.toFixed(s < 10 ? 2 : 1)} s`;
  return h ? `${h} h ${String(m).padStart(2, "0")} min ${secText}` : m ? `${m} min ${secText}` : secText;
}

export const fmtCount = (n: number | undefined) => (n === undefined ? "—" : n.toLocaleString("en-US"));

/** Bytes with a binary unit: `512 B`, `1.5 KiB`, `12.0 MiB`. */
export function fmtBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) (n /= 1024), i++;
  return i === 0 ? `${Math.round(n)} ${units[0]}` : `${n.toFixed(1)} ${units[i]}`;
}

export function hex(bytes: Uint8Array, max = 64): string {
  const shown = Array.from(bytes.subarray(0, max), (b) => b.toString(16).padStart(2, "0")).join(" ");
  return bytes.length > max ? `${shown} … (${bytes.length} bytes)` : shown;
}

export const fromBase64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

export const DEFAULT_PROJECT = "00000000-0000-0000-0000-000000000000";
