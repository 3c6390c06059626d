// `cloud-peer token create --user NAME --name LABEL [--data DIR] [--database URL] [--expires-at DATE]`: prints a
// new API token for a user, for bootstrapping and scripts; `token list --user NAME` lists a user's tokens as the
// API does (never the secret: only its digest is kept) and `token revoke --user NAME (--id N | --name LABEL)`
// deletes one. `tokens` is the same command. Works beside a running peer (SQLite WAL, or PostgreSQL).
import type { Command } from "commander";
import { createToken, deleteToken, listTokens } from "../accounts/service/tokens.js";
import { DomainError } from "../errors.js";
import { storeCommand, withServices, type StoreFlags } from "./open-store.js";

type Svc = Parameters<Parameters<typeof withServices>[1]>[0];

/** Runs fn on the named user's uuid; a domain error becomes its title (one line, as the API says it). */
function forUser<T>(flags: { user: string } & StoreFlags, fn: (svc: Svc, userUuid: string) => Promise<T>) {
  return withServices(flags, async (svc) => {
    try {
      const user = await svc.accounts.findUserByName(flags.user);
      if (!user) throw new Error(`no user named "${flags.user}"`);
      return await fn(svc, user.uuid);
    } catch (err) {
      if (err instanceof DomainError)
        throw new Error(err.properties ? `${err.title} (${JSON.stringify(err.properties)})` : err.title);
      throw err;
    }
  });
}

export async function createTokenCommand(
  opts: { user: string; name: string; expiresAt?: string } & StoreFlags,
): Promise<string> {
  return forUser(opts, async (svc, userUuid) => {
    if (opts.name.length < 1 || opts.name.length > 256) throw new Error("--name must have 1 to 256 characters");
    if (opts.expiresAt !== undefined && Number.isNaN(Date.parse(opts.expiresAt)))
      throw new Error("--expires-at must be an RFC 3339 date-time");
    const t = await createToken(svc, userUuid, { name: opts.name, expired_at: opts.expiresAt });
    return t.token!;
  });
}

/** Every token of the user, all pages, as the API lists them (no secret). */
async function allTokens(svc: Svc, userUuid: string) {
  const items: Awaited<ReturnType<typeof listTokens>>["items"] = [];
  for (let page = 1; ; page++) {
    const r = await listTokens(svc, userUuid, page, 200);
    items.push(...r.items);
    if (page >= r.page.total_page) return items;
  }
}

const never = (s: string | null) => s ?? "never";

export function register(program: Command): void {
  const token = program.command("token").alias("tokens").description("manage API tokens");
  const create = token
    .command("create")
    .description("create an API token for a user and print it (shown once)")
    .requiredOption("--user <name>", "user name")
    .requiredOption("--name <label>", "token name (1 to 256 characters)")
    .option("--expires-at <date-time>", "expiry, RFC 3339 (default: never)");
  storeCommand<{ user: string; name: string; expiresAt?: string }>(create, async (opts) => {
    process.stdout.write(`${await createTokenCommand(opts)}\n`);
  });
  const list = token
    .command("list")
    .description("list a user's API tokens: id, name, dates (the secrets are not kept, so never shown)")
    .requiredOption("--user <name>", "user name")
    .option("--json", "one JSON object per line, the API's fields");
  storeCommand<{ user: string; json?: boolean }>(list, async (opts) => {
    const items = await forUser(opts, allTokens);
    if (opts.json) {
      for (const t of items) process.stdout.write(`${JSON.stringify({ ...t, scopes: undefined })}\n`);
      return;
    }
    process.stdout.write("id  name  created_at  expired_at  last_used_at\n");
    for (const t of items)
      process.stdout.write(`${t.id}  ${t.name}  ${t.created_at}  ${never(t.expired_at)}  ${never(t.last_used_at)}\n`);
  });
  const revoke = token
    .command("revoke")
    .description("delete a user's API token (by --id or --name): requests with it are refused at once")
    .requiredOption("--user <name>", "user name")
    .option("--id <id>", "the token's id (token list)")
    .option("--name <label>", "the token's name");
  storeCommand<{ user: string; id?: string; name?: string }>(revoke, async (opts) => {
    if ((opts.id === undefined) === (opts.name === undefined)) throw new Error("give --id or --name (one of them)");
    const revoked = await forUser(opts, async (svc, userUuid) => {
      const t = (await allTokens(svc, userUuid)).find((x) =>
        opts.id !== undefined ? String(x.id) === opts.id : x.name === opts.name,
      );
      if (!t)
        throw new Error(
          `user "${opts.user}" has no API token ${opts.id !== undefined ? `with id ${opts.id}` : `named "${opts.name}"`}`,
        );
      await deleteToken(svc, userUuid, t.id);
      return t;
    });
    process.stdout.write(`revoked API token ${revoked.id} ("${revoked.name}") of "${opts.user}"\n`);
  });
}
