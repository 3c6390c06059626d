// Adapts svc.accounts (cloud/accounts/service/accounts-service.ts) to the port the authorization server uses.
// A user's standing is cached for one second: bearer requests would otherwise cost three queries.
import type { Services } from "../../services.js";
import type { AccountsPort, AccountUser } from "./accounts-port.js";

const STANDING_CACHE_MS = 1_000;

export function accountsAdapter(svc: Pick<Services, "accounts">): AccountsPort {
  const cache = new Map<string, { at: number; user: AccountUser | undefined }>();
  const standing = async (uuid: string): Promise<AccountUser | undefined> => {
    const p = await svc.accounts.principalForUser(uuid, "bearer");
    if (!p) return undefined;
    const row = await svc.accounts.findUser(uuid);
    return {
      uuid: p.uuid,
      name: row?.name ?? "",
      isSuper: p.isSuper,
      disabled: false,
      scopes: p.scopes,
      ...(p.restricted ? { restricted: p.restricted } : {}),
    };
  };
  return {
    async signIn(username, password, tenantUuid, from) {
      if (tenantUuid !== svc.accounts.tenantUuid) return { ok: false, reason: "invalid" };
      const r = await svc.accounts.signIn(username, password, from);
      if (!r.ok) return r;
      cache.delete(r.user.uuid);
      const user = await standing(r.user.uuid);
      return user ? { ok: true, user } : { ok: false, reason: "disabled" };
    },
    async user(uuid, opts) {
      const hit = opts?.fresh ? undefined : cache.get(uuid);
      if (hit && Date.now() - hit.at < STANDING_CACHE_MS) return hit.user;
      const user = await standing(uuid);
      if (cache.size > 10_000) cache.clear();
      cache.set(uuid, { at: Date.now(), user });
      return user;
    },
  };
}
