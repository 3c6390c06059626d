// `cloud-peer admin reset-password --user NAME [--data DIR] [--database URL]`: recovery when no one can sign in
// as an administrator. Works on the peer's store, whether or not the peer runs (SQLite in WAL mode takes a
// second writer; PostgreSQL any number). The new password is temporary, as one an administrator sets through the API: the user
// must change it at the next sign-in. It also unlocks a password locked by failed sign-ins.
import type { Command } from "commander";
import { resetToTemporary } from "../accounts/service/passwords.js";
import { storeCommand, withServices, type StoreFlags } from "./open-store.js";

export async function resetPasswordCommand(
  opts: { user: string } & StoreFlags,
): Promise<{ password: string; disabled: boolean }> {
  return withServices(opts, async (svc) => {
    const user = await svc.accounts.findUserByName(opts.user);
    if (!user) throw new Error(`no user named "${opts.user}"`);
    const view = await resetToTemporary(svc, user.uuid);
    return { password: view.temporary_password!, disabled: Boolean(user.disabled) };
  });
}

export function register(program: Command): void {
  const admin = program.command("admin").description("recovery on the peer's store");
  const reset = admin
    .command("reset-password")
    .description(
      "give a user a new temporary password and print it (shown once); the user changes it at the next sign-in",
    )
    .requiredOption("--user <name>", "user name");
  storeCommand<{ user: string }>(reset, async (opts) => {
    const r = await resetPasswordCommand(opts);
    // The password alone on stdout (for a script); what to do with it on stderr.
    process.stdout.write(`${r.password}\n`);
    process.stderr.write(
      `temporary password of "${opts.user}" set: change it at the next sign-in${r.disabled ? ` (the user is disabled: enable it to sign in)` : ""}\n`,
    );
  });
}
