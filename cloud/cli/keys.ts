// `cloud-peer keys rotate [--data DIR]`: adds a new ES256 signing key. The previous keys stay in the
// JWKS until every token they signed has expired (access-token lifetime plus the reload interval of a
// running peer, which picks the new key up within 30 s). `cloud-peer keys list` shows them.
import type { Command } from "commander";
import { keysRepo } from "../oauth/repo/keys.js";
import { KEY_RELOAD_MS, rotateKeys } from "../oauth/tokens/keystore.js";
import { withServices } from "./data-dir.js";
import { notify } from "../cluster/service/notices.js";

/** Rotates the signing key of the peer whose data lives in `data`; returns the new kid. */
export async function rotateKeysCommand(data?: string): Promise<{ kid: string; keepSeconds: number }> {
  return withServices(data, async (svc) => {
    const keepSeconds = svc.config.accessTokenTtl + Math.ceil((2 * KEY_RELOAD_MS) / 1000);
    const row = await rotateKeys(svc.db, keepSeconds);
    // With CLOUD_NATS the running peers reload at once, not at their next poll.
    notify(svc.cluster.bus, "keys");
    return { kid: row.kid, keepSeconds };
  });
}

export async function listKeysCommand(data?: string) {
  return withServices(data, async (svc) =>
    (await keysRepo.published(svc.db)).map((k) => ({ kid: k.kid, alg: k.alg, created_at: k.created_at, retire_after: k.retire_after ?? "current" })),
  );
}

export function register(program: Command): void {
  const keys = program.command("keys").description("manage the signing keys of access tokens");
  keys
    .command("rotate")
    .description("add a new signing key; older keys stay published until their last token expires")
    .option("--data <dir>", "data directory (env CLOUD_DATA)")
    .action(async (opts: { data?: string }) => {
      try {
        const r = await rotateKeysCommand(opts.data ?? program.opts().data);
        process.stdout.write(`new signing key ${r.kid}; previous keys stay published for ${r.keepSeconds} s\n`);
      } catch (err) {
        process.stderr.write(`cloud-peer keys rotate: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });
  keys
    .command("list")
    .description("list the published signing keys")
    .option("--data <dir>", "data directory (env CLOUD_DATA)")
    .action(async (opts: { data?: string }) => {
      try {
        for (const k of await listKeysCommand(opts.data ?? program.opts().data))
          process.stdout.write(`${k.kid}  ${k.alg}  created ${k.created_at}  ${k.retire_after === "current" ? "current" : `retires ${k.retire_after}`}\n`);
      } catch (err) {
        process.stderr.write(`cloud-peer keys list: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });
}
