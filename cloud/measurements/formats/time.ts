// Nanosecond-exact times: RFC 3339 text <-> epoch nanoseconds (bigint) <-> protobuf Timestamp.
// JS Dates stop at milliseconds; base times and data points carry nanoseconds.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9})\d*)?(Z|z|[+-]\d{2}:\d{2})$/;

/**
 * The times the API takes and gives: what both RFC 3339 (four-digit years) and a protobuf Timestamp carry,
 * 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z, as epoch nanoseconds.
 */
export const MIN_TIME_NS = -62_135_596_800_000_000_000n;
export const MAX_TIME_NS = 253_402_300_799_999_999_999n;

const inRange = (ns: bigint) => (ns >= MIN_TIME_NS && ns <= MAX_TIME_NS ? ns : undefined);

/**
 * Parses RFC 3339 (fraction up to nanoseconds) or, as the deprecated form, integer Unix microseconds; a time
 * outside MIN_TIME_NS..MAX_TIME_NS is undefined, like text that is no time.
 */
export function parseTimeNs(text: string): bigint | undefined {
  if (/^-?\d{1,19}$/.test(text)) return inRange(BigInt(text) * 1000n);
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const date = new Date(0);
  // Date.UTC reads years 0-99 as 1900-1999: set the full year apart.
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s));
  const ms = date.getTime();
  if (Number.isNaN(ms) || Number(mo) > 12 || Number(d) > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 60)
    return undefined;
  let offsetMin = 0;
  if (zone && zone !== "Z" && zone !== "z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    offsetMin = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  }
  const nanos = BigInt((frac ?? "").padEnd(9, "0") || "0");
  return inRange((BigInt(ms) - BigInt(offsetMin) * 60_000n) * 1_000_000n + nanos);
}

export const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b));

/**
 * RFC 3339 in UTC; the fraction has 9 digits when there is sub-second precision, none otherwise. A time outside
 * MIN_TIME_NS..MAX_TIME_NS (a row stored before the API checked its input) is shown at the nearest end of the
 * range, so one such row never breaks a list.
 */
export function formatNs(time: bigint): string {
  const ns = time < MIN_TIME_NS ? MIN_TIME_NS : time > MAX_TIME_NS ? MAX_TIME_NS : time;
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
