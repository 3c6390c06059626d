// Small helpers shared by the accounts operations.
import type { Principal } from "../../auth/principal.js";
import { Forbidden, NotFound, Unauthenticated } from "../../errors.js";
import type { Services } from "../../services.js";
import type { UserRow } from "../repo/users.js";

/** The signed-in user's uuid; edges have no /users/me. */
export function meUuid(principal: Principal | undefined): string {
  if (!principal) throw new Unauthenticated();
  if (principal.kind !== "user") throw new Forbidden("only users have an own user");
  return principal.uuid;
}

export async function requireUser(svc: Services, uuid: string): Promise<UserRow> {
  const u = await svc.accounts.findUser(uuid);
  if (!u) throw new NotFound("user not found");
  return u;
}

export const isoAfter = (ms: number) => new Date(Date.now() + ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** expired_at of a password set now (null when passwords never expire). */
export const passwordExpiry = (svc: Services) =>
  svc.config.passwordLifetimeDays > 0 ? isoAfter(svc.config.passwordLifetimeDays * 86400_000) : null;
