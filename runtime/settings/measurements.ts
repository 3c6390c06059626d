// Measurements held on the device, as the command API shows them. The data path (queue, deferred
// upload) records and updates them; the API lists and deletes them. Kept in the settings LMDB
// environment so a delete and the settings share one durable store.
import type { Database, RootDatabase } from "lmdb";
import type { Measurement } from "./schemas.js";

export interface MeasurementCatalog {
  /** Oldest first (by base_time). */
  list(): Measurement[];
  get(uuid: string): Measurement | undefined;
  /** Removes the measurement and, through the hooks, its pending data. False when unknown. */
  remove(uuid: string): Promise<boolean>;
}

export type RemoveHook = (uuid: string) => Promise<void> | void;

export class LmdbMeasurementCatalog implements MeasurementCatalog {
  private readonly db: Database<Measurement, string>;
  private readonly hooks: RemoveHook[] = [];

  constructor(env: RootDatabase) {
    this.db = env.openDB<Measurement, string>({ name: "measurements" });
  }

  list(): Measurement[] {
    return [...this.db.getRange()].map((e) => e.value).sort((a, b) => a.base_time.localeCompare(b.base_time) || a.uuid.localeCompare(b.uuid));
  }

  get(uuid: string): Measurement | undefined {
    return this.db.get(uuid.toLowerCase());
  }

  /** Inserts or replaces a measurement (used by the data path, and by tests). */
  record(m: Measurement): void {
    this.db.transactionSync(() => this.db.putSync(m.uuid.toLowerCase(), { ...m, uuid: m.uuid.toLowerCase() }));
  }

  /** Lets the queue delete a measurement's stored chunks when the measurement is deleted. */
  onRemove(hook: RemoveHook): void {
    this.hooks.push(hook);
  }

  async remove(uuid: string): Promise<boolean> {
    const key = uuid.toLowerCase();
    if (!this.db.doesExist(key)) return false;
    for (const hook of this.hooks) await hook(key);
    this.db.transactionSync(() => this.db.removeSync(key));
    return true;
  }
}

/** Formats an epoch time in nanoseconds as RFC 3339 UTC with nine fractional digits. */
export function nanosToRfc3339(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const frac = (((ns % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n).toString().padStart(9, "0");
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, `.${frac}Z`);
}
