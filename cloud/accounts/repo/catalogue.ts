// SQL for the tenant row and the timestamps of the built-in catalogue entries (the definitions
// themselves live in code, cloud/accounts/service/catalogue.ts).
import type { Queryable } from "../../database/db.js";

export interface CatalogueEntryRow {
  uuid: string;
  kind: string;
  digest: string;
  created_at: string;
  updated_at: string;
}

export class CatalogueRepo {
  constructor(private readonly db: Queryable) {}

  ensureTenant(uuid: string, name: string, now: string) {
    return this.db.run("INSERT OR IGNORE INTO tenants (uuid, name, created_at) VALUES (?,?,?)", [uuid, name, now]);
  }
  entries() {
    return this.db.all<CatalogueEntryRow>("SELECT * FROM catalogue_entries");
  }
  /** Inserts a new entry, or bumps updated_at when its definition changed. */
  upsert(uuid: string, kind: string, digest: string, now: string) {
    return this.db.run(
      `INSERT INTO catalogue_entries (uuid, kind, digest, created_at, updated_at) VALUES (?,?,?,?,?)
       ON CONFLICT(uuid) DO UPDATE SET digest = excluded.digest, updated_at = excluded.updated_at WHERE catalogue_entries.digest <> excluded.digest`,
      [uuid, kind, digest, now, now],
    );
  }
}
