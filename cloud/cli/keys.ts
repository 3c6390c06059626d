// `cloud-peer keys rotate [--data DIR] [--database URL]`: adds a new ES256 signing key. The previous keys stay in the
// JWKS until every token they signed has expired (access-token lifetime plus the reload interval of a
// running peer, which picks the new key up within 30 s). `cloud-peer keys list` shows them.
import type { Command } from "commander";
import { keysRepo } from "../oauth/repo/keys.js";
import { KEY_RELOAD_MS, rotateKeys } from "../oauth/tokens/keystore.js";
import { notify } from "../cluster/service/notices.js";
import { storeCommand, withServices, type StoreFlags } from "./open-store.js";

/** Rotates the signing key of the peer whose store the flags name; returns the new kid. */
export async function rotateKeysCommand(flags: StoreFlags = {}): Promise<{ kid: string; keepSeconds: number }> {
  return withServices(flags, async (svc) => {
    const keepSeconds = svc.config.accessTokenTtl + Math.ceil((2 * KEY_RELOAD_MS) / 1000);
    const row = await rotateKeys(svc.db, keepSeconds);
    // With CLOUD_NATS the running peers reload at once, not at their next poll.
    notify(svc.cluster.bus, "keys");
    return { kid: row.kid, keepSeconds };
  });
}

export async function listKeysCommand(flags: StoreFlags = {}) {
  return withServices(flags, async (svc) =>
    (await keysRepo.published(svc.db)).map((k) => ({
      kid: k.kid,
      alg: k.alg,
      created_at: k.created_at,
      retire_after: k.retire_after ?? "current",
    })),
  );
}

export function register(program: Command): void {
  const keys = program.command("keys").description("manage the signing keys of access tokens");
  storeCommand(
    keys
      .command("rotate")
      .description("add a new signing key; older keys stay published until their last token expires"),
    async (opts) => {
      const r = await rotateKeysCommand(opts);
      process.stdout.write(`new signing key ${r.kid}; previous keys stay published for ${r.keepSeconds} s\n`);
    },
  );
  storeCommand(keys.command("list").description("list the published signing keys"), async (opts) => {
    for (const k of await listKeysCommand(opts))
      process.stdout.write(
        `${k.kid}  ${k.alg}  created ${k.created_at}  ${k.retire_after === "current" ? "current" : `retires ${k.retire_after}`}\n`,
      );
  });
}
