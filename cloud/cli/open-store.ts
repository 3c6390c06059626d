// What every maintenance command that opens a peer's store shares: the --data and --database options (env
// CLOUD_DATA, CLOUD_DATABASE; the program's own flags before the sub-command count too), the settings they give,
// the refusal of a data directory without a database, the services opened and closed around the work, and a
// failure reported as one line `cloud-peer <command>: <message>` with exit code 1.
import type { Command } from "commander";
import type pino from "pino";
import { loadConfig, type CloudConfig } from "../config.js";
import { openServices } from "../server.js";
import { postgresIsEmpty } from "../database/copy-store.js";
import { isPostgresUrl } from "../database/open.js";
import { PgDb } from "../database/pg-db.js";
import { requireDatabase } from "./data-dir.js";

export interface StoreFlags {
  data?: string;
  database?: string;
  logLevel?: string;
}

/** The settings of the store the flags name; an SQLite data directory must already hold its database. */
export function storeConfig(flags: StoreFlags, o: { mustExist?: boolean } = {}): CloudConfig {
  const config = loadConfig({ dataDir: flags.data, database: flags.database, logLevel: flags.logLevel ?? "warn" });
  if (o.mustExist !== false) requireDatabase(config.dataDir, config.database);
  return config;
}

/** Refuses a command that works on an SQLite data directory's files when the store is PostgreSQL. */
export function refusePostgres(config: CloudConfig, why: string): void {
  if (isPostgresUrl(config.database)) throw new Error(`the store is PostgreSQL (--database / CLOUD_DATABASE): ${why}`);
}

type Svc = Awaited<ReturnType<typeof openServices>>["svc"];

/**
 * A PostgreSQL database must hold a peer's store already: a wrong URL must not get a fresh store with a new
 * `admin` (whose temporary password would end up in the output a script reads). The URL is not repeated: it
 * may hold a password.
 */
async function requirePostgresStore(url: string): Promise<void> {
  const db = await PgDb.open(url);
  try {
    if (await postgresIsEmpty(db))
      throw new Error(
        "the database --database names holds no cloud-peer store (start cloud-peer once with it, or name the right database)",
      );
  } finally {
    await db.close();
  }
}

/** Runs fn on the services of an existing store (beside a running peer: SQLite WAL, or PostgreSQL), then closes them. */
export async function withServices<T>(flags: StoreFlags, fn: (svc: Svc) => Promise<T>): Promise<T> {
  const config = storeConfig(flags);
  if (isPostgresUrl(config.database)) await requirePostgresStore(config.database);
  const { svc } = await openServices(config, { logDestination: process.stderr as unknown as pino.DestinationStream });
  try {
    return await fn(svc);
  } finally {
    for (const close of [...svc.onClose].reverse()) await close();
    await svc.db.close();
  }
}

/** `keys rotate` for the command `rotate` under `keys`. */
function commandName(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/**
 * Gives a sub-command --data and --database and its action: `fn` gets the command's options with those two
 * falling back to the program's, and a failure becomes one line on stderr and exit code 1.
 */
export function storeCommand<O extends object>(
  cmd: Command,
  fn: (opts: O & StoreFlags) => Promise<void>,
  dataHelp = "data directory (env CLOUD_DATA)",
): Command {
  return cmd
    .option("--data <dir>", dataHelp)
    .option(
      "--database <url>",
      "sqlite: (the data directory's database, the default) or postgres://user@host:port/db (env CLOUD_DATABASE)",
    )
    .action(async (opts: O & StoreFlags, self: Command) => {
      let top: StoreFlags = {};
      for (let c = self.parent; c; c = c.parent) top = { ...c.opts<StoreFlags>(), ...top };
      try {
        await fn({ ...opts, data: opts.data ?? top.data, database: opts.database ?? top.database });
      } catch (err) {
        process.stderr.write(`cloud-peer ${commandName(self)}: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });
}
