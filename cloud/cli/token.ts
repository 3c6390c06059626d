// `cloud-peer token create --user NAME --name LABEL [--data DIR] [--expires-at DATE]`: prints a new
// API token for a user, for bootstrapping and scripts. Works beside a running peer (SQLite WAL).
import type { Command } from "commander";
import { createToken } from "../accounts/service/tokens.js";
import { loadConfig } from "../config.js";
import { DomainError } from "../errors.js";
import { openServices } from "../server.js";
import { requireDatabase } from "./data-dir.js";

export async function createTokenCommand(opts: { user: string; name: string; data?: string; expiresAt?: string; logLevel?: string }): Promise<string> {
  const config = loadConfig({ dataDir: opts.data, logLevel: opts.logLevel ?? "warn" });
  requireDatabase(config.dataDir, config.database);
  const { svc } = await openServices(config, { logDestination: process.stderr as unknown as import("pino").DestinationStream });
  try {
    const user = await svc.accounts.findUserByName(opts.user);
    if (!user) throw new Error(`no user named "${opts.user}"`);
    if (opts.name.length < 1 || opts.name.length > 256) throw new Error("--name must have 1 to 256 characters");
    if (opts.expiresAt !== undefined && Number.isNaN(Date.parse(opts.expiresAt))) throw new Error("--expires-at must be an RFC 3339 date-time");
    const t = await createToken(svc, user.uuid, { name: opts.name, expired_at: opts.expiresAt });
    return t.token!;
  } catch (err) {
    if (err instanceof DomainError) throw new Error(err.properties ? `${err.title} (${JSON.stringify(err.properties)})` : err.title);
    throw err;
  } finally {
    for (const fn of [...svc.onClose].reverse()) await fn();
    await svc.db.close();
  }
}

export function register(program: Command): void {
  const token = program.command("token").description("manage API tokens");
  token
    .command("create")
    .description("create an API token for a user and print it (shown once)")
    .requiredOption("--user <name>", "user name")
    .requiredOption("--name <label>", "token name (1 to 256 characters)")
    .option("--data <dir>", "data directory (env CLOUD_DATA)")
    .option("--expires-at <date-time>", "expiry, RFC 3339 (default: never)")
    .action(async (opts: { user: string; name: string; data?: string; expiresAt?: string }) => {
      try {
        const t = await createTokenCommand({ ...opts, data: opts.data ?? program.opts().data });
        process.stdout.write(`${t}\n`);
      } catch (err) {
        process.stderr.write(`cloud-peer token create: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });
}
