// Versioned migrations, applied in order at start inside one transaction each.
// Version ranges per area keep independent modules from colliding:
// 100-199 accounts, 200-299 oauth, 300-399 organisation, 400-499 iscp/measurements.
import type { Db, Queryable } from "./db.js";

export interface Migration {
  version: number;
  name: string;
  up: string | ((tx: Queryable) => Promise<void>);
}

export async function migrate(db: Db, migrations: Migration[]): Promise<number[]> {
  await db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
  );
  const done = new Set((await db.all<{ version: number }>("SELECT version FROM schema_migrations")).map((r) => r.version));
  const seen = new Set<number>();
  const applied: number[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (seen.has(m.version)) throw new Error(`duplicate migration version ${m.version}`);
    seen.add(m.version);
    if (done.has(m.version)) continue;
    await db.transaction(async (tx) => {
      if (typeof m.up === "string") await tx.exec(m.up);
      else await m.up(tx);
      await tx.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
        m.version,
        m.name,
        new Date().toISOString(),
      ]);
    });
    applied.push(m.version);
  }
  return applied;
}
