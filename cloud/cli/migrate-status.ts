// `cloud-peer migrate status [--data DIR] [--database URL]`: which migrations the store has and which this
// version would apply at its next start, without changing anything. The exit code says whether the store is
// current, for an upgrade script: 0 current, 3 migrations pending, 4 migrated by a newer cloud-peer (this
// version refuses to start on it), 1 the store cannot be read.
import type { Command } from "commander";
import { modules } from "../modules.js";
import { migrationStatus, type MigrationStatus } from "../database/migrate.js";
import { openDatabase } from "../database/open.js";
import { storeCommand, storeConfig, type StoreFlags } from "./open-store.js";

const MIGRATE_EXIT = { current: 0, pending: 3, newer: 4 } as const;

async function migrateStatusCommand(flags: StoreFlags): Promise<MigrationStatus> {
  const db = await openDatabase(storeConfig(flags));
  try {
    return await migrationStatus(
      db,
      modules.flatMap((m) => m.migrations ?? []),
    );
  } finally {
    await db.close();
  }
}

/** One line per migration, oldest first (the name last: names hold spaces), and a last line saying what it means. */
function statusLines(s: MigrationStatus): string[] {
  const rows = [
    ...s.applied.map((m) => ({ ...m, state: "applied" })),
    ...s.unknown.map((m) => ({ ...m, state: "unknown", applied_at: `${m.applied_at} (by a newer version)` })),
    ...s.pending.map((m) => ({ ...m, state: "pending", applied_at: "-" })),
  ].sort((a, b) => a.version - b.version);
  const width = Math.max(10, ...rows.map((r) => r.applied_at.length));
  const lines = [`version  state    ${"applied_at".padEnd(width)}  name`];
  for (const r of rows)
    lines.push(`${String(r.version).padEnd(7)}  ${r.state.padEnd(7)}  ${r.applied_at.padEnd(width)}  ${r.name}`);
  if (s.unknown.length > 0)
    lines.push(
      `the store was migrated by a newer cloud-peer (${s.unknown.length} migration(s) unknown here): run that version`,
    );
  else if (s.pending.length > 0)
    lines.push(`${s.pending.length} migration(s) pending: cloud-peer applies them at its next start`);
  else lines.push(`the store is current (${s.applied.length} migrations applied)`);
  return lines;
}

export function register(program: Command): void {
  const migrate = program.command("migrate").description("the store's schema migrations");
  storeCommand(
    migrate
      .command("status")
      .description(
        "list applied and pending migrations; exit code 0 when the store is current, 3 when migrations are pending, 4 when a newer cloud-peer migrated it",
      ),
    async (opts) => {
      const s = await migrateStatusCommand(opts);
      process.stdout.write(`${statusLines(s).join("\n")}\n`);
      process.exitCode =
        s.unknown.length > 0 ? MIGRATE_EXIT.newer : s.pending.length > 0 ? MIGRATE_EXIT.pending : MIGRATE_EXIT.current;
    },
  );
}
