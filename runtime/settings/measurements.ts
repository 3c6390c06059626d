// Measurements held on the device, as the command API shows them. The data path (queue, deferred
// upload) records and updates them; the API lists and deletes them. Kept in the settings LMDB
// environment so a delete and the settings share one durable store.
import type { Measurement } from "./schemas.js";

export interface MeasurementCatalog {
  /** Oldest first (by base_time). */
  list(): Measurement[];
  get(uuid: string): Measurement | undefined;
  /** Removes the measurement and, through the hooks, its pending data. False when unknown. */
  remove(uuid: string): Promise<boolean>;
}

/** Formats an epoch time in nanoseconds as RFC 3339 UTC with nine fractional digits. */
export function nanosToRfc3339(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const frac = (((ns % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n).toString().padStart(9, "0");
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, `.${frac}Z`);
}
