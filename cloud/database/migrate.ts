// Versioned migrations, applied in order at start inside one transaction each.
// Version ranges per area keep independent modules from colliding:
// 100-199 accounts, 200-299 oauth, 300-399 organisation, 400-499 iscp/measurements.
// A migration is written in SQLite's dialect; on PostgreSQL its DDL is translated (pg-sql.ts) unless it gives
// `postgres` itself. Instances starting together on one PostgreSQL database migrate one at a time (Db.exclusive).
import type { Db, Queryable } from "./db.js";
import { ddlToPostgres } from "./pg-sql.js";

export interface Migration {
  version: number;
  name: string;
  up: string | ((tx: Queryable) => Promise<void>);
  /** PostgreSQL's version where translating `up` would not do. */
  postgres?: string | ((tx: Queryable) => Promise<void>);
}

/** What a migration runs on this database. */
function upOf(db: Db, m: Migration): Migration["up"] {
  if (db.dialect !== "postgres") return m.up;
  if (m.postgres !== undefined) return m.postgres;
  return typeof m.up === "string" ? ddlToPostgres(m.up) : m.up;
}

export function migrate(db: Db, migrations: Migration[]): Promise<number[]> {
  return db.exclusive(async () => {
    // Case-insensitive text (names, e-mail addresses) on PostgreSQL; a trusted extension, any database owner may add it.
    if (db.dialect === "postgres") await db.exec("CREATE EXTENSION IF NOT EXISTS citext");
    await db.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    );
    const rows = await db.all<{ version: number; name: string }>(
      "SELECT version, name FROM schema_migrations ORDER BY version",
    );
    const done = new Set(rows.map((r) => r.version));
    // A downgrade: this code would run on tables it does not know (and a later upgrade would skip nothing it
    // needs to redo), so it refuses before touching anything.
    const known = new Set(migrations.map((m) => m.version));
    const newer = rows.filter((r) => !known.has(r.version));
    if (newer.length > 0)
      throw new Error(
        `the database was migrated by a newer cloud-peer: it has ${newer.map((r) => `${r.version} (${r.name})`).join(", ")}, which this version does not know ` +
          `(it knows up to ${Math.max(0, ...known)}); run the newer version again, or restore a backup taken before the upgrade`,
      );
    const seen = new Set<number>();
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (seen.has(m.version)) throw new Error(`duplicate migration version ${m.version}`);
      seen.add(m.version);
      if (done.has(m.version)) continue;
      const up = upOf(db, m);
      await db.transaction(async (tx) => {
        if (typeof up === "string") await tx.exec(up);
        else await up(tx);
        await tx.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
          m.version,
          m.name,
          new Date().toISOString(),
        ]);
      });
      applied.push(m.version);
    }
    return applied;
  });
}

export interface MigrationStatus {
  applied: { version: number; name: string; applied_at: string }[];
  pending: { version: number; name: string }[];
  /** Applied by a newer cloud-peer: this version does not know them. */
  unknown: { version: number; name: string; applied_at: string }[];
}

/** What `migrate` would do on this database, without changing anything (`cloud-peer migrate status`). */
export async function migrationStatus(db: Db, migrations: Migration[]): Promise<MigrationStatus> {
  const table =
    db.dialect === "postgres"
      ? await db.get<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t")
      : await db.get<{ t: string | null }>(
          "SELECT name AS t FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
        );
  const rows = table?.t
    ? await db.all<{ version: number; name: string; applied_at: string }>(
        "SELECT version, name, applied_at FROM schema_migrations ORDER BY version",
      )
    : [];
  const known = new Map(migrations.map((m) => [m.version, m]));
  const done = new Set(rows.map((r) => Number(r.version)));
  const row = (r: (typeof rows)[number]) => ({ version: Number(r.version), name: r.name, applied_at: r.applied_at });
  return {
    applied: rows.filter((r) => known.has(Number(r.version))).map(row),
    pending: [...known.values()]
      .filter((m) => !done.has(m.version))
      .sort((a, b) => a.version - b.version)
      .map((m) => ({ version: m.version, name: m.name })),
    unknown: rows.filter((r) => !known.has(Number(r.version))).map(row),
  };
}
