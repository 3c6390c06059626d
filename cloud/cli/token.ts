// `cloud-peer token create --user NAME --name LABEL [--data DIR] [--database URL] [--expires-at DATE]`: prints a
// new API token for a user, for bootstrapping and scripts. Works beside a running peer (SQLite WAL, or PostgreSQL).
import type { Command } from "commander";
import { createToken } from "../accounts/service/tokens.js";
import { DomainError } from "../errors.js";
import { storeCommand, withServices, type StoreFlags } from "./open-store.js";

export async function createTokenCommand(
  opts: { user: string; name: string; expiresAt?: string } & StoreFlags,
): Promise<string> {
  return withServices(opts, async (svc) => {
    try {
      const user = await svc.accounts.findUserByName(opts.user);
      if (!user) throw new Error(`no user named "${opts.user}"`);
      if (opts.name.length < 1 || opts.name.length > 256) throw new Error("--name must have 1 to 256 characters");
      if (opts.expiresAt !== undefined && Number.isNaN(Date.parse(opts.expiresAt)))
        throw new Error("--expires-at must be an RFC 3339 date-time");
      const t = await createToken(svc, user.uuid, { name: opts.name, expired_at: opts.expiresAt });
      return t.token!;
    } catch (err) {
      if (err instanceof DomainError)
        throw new Error(err.properties ? `${err.title} (${JSON.stringify(err.properties)})` : err.title);
      throw err;
    }
  });
}

export function register(program: Command): void {
  const token = program.command("token").description("manage API tokens");
  const create = token
    .command("create")
    .description("create an API token for a user and print it (shown once)")
    .requiredOption("--user <name>", "user name")
    .requiredOption("--name <label>", "token name (1 to 256 characters)")
    .option("--expires-at <date-time>", "expiry, RFC 3339 (default: never)");
  storeCommand<{ user: string; name: string; expiresAt?: string }>(create, async (opts) => {
    process.stdout.write(`${await createTokenCommand(opts)}\n`);
  });
}
