// For the migration tests: a SQLite store in a temp dir as a peer before migration `version` left it, with one
// sequence (id 7, uuid "s") of measurement `measUuid`, and foreign keys off until `upgrade()` (the rows a test
// writes as that peer did need no measurement row).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SqliteDb as Db } from "../../../cloud/database/db.js";
import { migrate } from "../../../cloud/database/migrate.js";
import { modules } from "../../../cloud/modules.js";

export interface OldStore {
  db: Db;
  /** Foreign keys on again, then every migration not applied yet: the versions applied, in order. */
  upgrade(): Promise<number[]>;
  close(): Promise<void>;
}

export async function openStoreBefore(version: number, measUuid: string): Promise<OldStore> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `store-before-${version}-`));
  const db = await Db.open(path.join(dir, "cloud.db"));
  const all = modules.flatMap((m) => m.migrations ?? []);
  await migrate(
    db,
    all.filter((m) => m.version < version),
  );
  await db.exec("PRAGMA foreign_keys = OFF");
  await db.run(
    "INSERT INTO meas_sequences (id, measurement_uuid, uuid, created_at, updated_at) VALUES (7, ?, 's', 'x', 'x')",
    [measUuid],
  );
  return {
    db,
    async upgrade() {
      await db.exec("PRAGMA foreign_keys = ON");
      return migrate(db, all);
    },
    async close() {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
