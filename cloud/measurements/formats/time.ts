// Nanosecond-exact times: RFC 3339 text <-> epoch nanoseconds (bigint) <-> protobuf Timestamp.
// JS Dates stop at milliseconds; base times and data points carry nanoseconds.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9})\d*)?(Z|z|[+-]\d{2}:\d{2})$/;

/** Parses RFC 3339 (fraction up to nanoseconds) or, as the deprecated form, integer Unix microseconds. */
export function parseTimeNs(text: string): bigint | undefined {
  if (/^-?\d{1,19}$/.test(text)) return BigInt(text) * 1000n;
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(ms) || Number(mo) > 12 || Number(d) > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) return undefined;
  let offsetMin = 0;
  if (zone && zone !== "Z" && zone !== "z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    offsetMin = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  }
  const nanos = BigInt((frac ?? "").padEnd(9, "0") || "0");
  return (BigInt(ms) - BigInt(offsetMin) * 60_000n) * 1_000_000n + nanos;
}

export const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b));

/** RFC 3339 in UTC; the fraction has 9 digits when there is sub-second precision, none otherwise. */
export function formatNs(ns: bigint): string {
  const ms = floorDiv(ns, 1_000_000n);
  const sub = ns - floorDiv(ns, 1_000_000_000n) * 1_000_000_000n;
  const iso = new Date(Number(ms)).toISOString().slice(0, 19);
  return sub === 0n ? `${iso}Z` : `${iso}.${sub.toString().padStart(9, "0")}Z`;
}

export function toTimestamp(ns: bigint): { seconds: number; nanos: number } {
  const seconds = floorDiv(ns, 1_000_000_000n);
  return { seconds: Number(seconds), nanos: Number(ns - seconds * 1_000_000_000n) };
}

export type TimeFormat = "ns" | "us" | "ms" | "s" | "rfc3339";

/** A JSON value for a point time: integer units (as raw JSON number text) or an RFC 3339 string. */
export function jsonTime(ns: bigint, format: TimeFormat): string {
  switch (format) {
    case "ns":
      return ns.toString();
    case "us":
      return floorDiv(ns, 1000n).toString();
    case "ms":
      return floorDiv(ns, 1_000_000n).toString();
    case "s":
      return floorDiv(ns, 1_000_000_000n).toString();
    case "rfc3339":
      return JSON.stringify(formatNs(ns));
  }
}

export const nowIso = () => new Date().toISOString();
