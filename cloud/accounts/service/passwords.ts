// Password operations: policy check, change (with the old password or a recovery token from a
// password-reset mail), reset to a temporary password, unlock, and the reset mail itself.
import type { Principal } from "../../auth/principal.js";
import { Forbidden, Invalid, Unauthenticated } from "../../errors.js";
import type { Services } from "../../services.js";
import { generateSecret } from "../../oauth/service/secrets.js";
import { checkPolicy, digest, generatePassword, hashPassword, verifyPassword } from "./password-rules.js";
import { nowIso } from "./accounts-service.js";
import { passwordView } from "./views.js";
import { forgetReplacedAdminPassword } from "./admin-password-file.js";
import { isoAfter, meUuid, passwordExpiry, requireUser } from "./account-helpers.js";

export const RECOVERY_TTL_MS = 3600_000;

export async function checkMyPassword(svc: Services, principal: Principal | undefined, password: string) {
  const uuid = meUuid(principal);
  const user = await requireUser(svc, uuid);
  const current = await svc.accounts.users.password(uuid);
  const matchesCurrent = current ? await verifyPassword(password, current.hash) : false;
  const errors = checkPolicy(password, { username: user.name, matchesCurrent });
  return { valid: errors.length === 0, errors };
}

/** Who changes the password: the recovery token's user, or the signed-in user with the old password. */
async function changingUser(
  svc: Services,
  principal: Principal | undefined,
  body: { old_password?: string; recovery_token?: string },
) {
  if (body.recovery_token !== undefined) {
    const rec = await svc.accounts.emails.recoveryByDigest(digest(body.recovery_token));
    if (!rec || rec.used_at || Date.parse(rec.expired_at) <= Date.now())
      throw new Invalid("invalid or expired recovery token", { recovery_token: "invalid or expired" });
    if (principal && principal.uuid !== rec.user_uuid)
      throw new Forbidden("the recovery token belongs to another user");
    return { uuid: rec.user_uuid, recovery: rec.token_digest };
  }
  if (!principal) throw new Unauthenticated("sign in, or give a recovery_token");
  const uuid = meUuid(principal);
  if (body.old_password === undefined)
    throw new Invalid("old_password or recovery_token is required", { old_password: "required" });
  if (!(await svc.accounts.verifyPassword(uuid, body.old_password)))
    throw new Invalid("the old password is not correct", { old_password: "incorrect" });
  return { uuid, recovery: undefined };
}

export async function changePassword(
  svc: Services,
  principal: Principal | undefined,
  body: { password: string; old_password?: string; recovery_token?: string },
) {
  const who = await changingUser(svc, principal, body);
  const user = await requireUser(svc, who.uuid);
  const current = (await svc.accounts.users.password(who.uuid))!;
  const errors = checkPolicy(body.password, {
    username: user.name,
    matchesCurrent: await verifyPassword(body.password, current.hash),
  });
  if (errors.length > 0)
    throw new Invalid(`the new password does not satisfy the policy: ${errors.map((e) => e.type).join(", ")}`, {
      password: errors.map((e) => `${e.type}: ${e.message}`).join("; "),
    });
  if (who.recovery && !(await svc.accounts.emails.useRecovery(who.recovery, nowIso())))
    throw new Invalid("invalid or expired recovery token", { recovery_token: "invalid or expired" });
  await svc.accounts.users.setPassword(
    who.uuid,
    await hashPassword(body.password),
    false,
    passwordExpiry(svc),
    nowIso(),
  );
  await forgetReplacedAdminPassword(svc, current.hash);
  return passwordView((await svc.accounts.users.password(who.uuid))!);
}

export async function resetToTemporary(svc: Services, uuid: string) {
  await requireUser(svc, uuid);
  const old = await svc.accounts.users.password(uuid);
  const password = generatePassword();
  await svc.accounts.users.setPassword(uuid, await hashPassword(password), true, passwordExpiry(svc), nowIso());
  if (old) await forgetReplacedAdminPassword(svc, old.hash);
  return passwordView((await svc.accounts.users.password(uuid))!, password);
}

/** Clears the user's failed sign-ins: its count and its name's back-off (the address's stays). */
export async function unlock(svc: Services, uuid: string) {
  const user = await requireUser(svc, uuid);
  await svc.accounts.users.unlock(uuid, nowIso());
  svc.accounts.signInBackOff.succeeded(user.name);
  return passwordView((await svc.accounts.users.password(uuid))!);
}

/** Mails a recovery token to a verified address; silent otherwise (no account enumeration). */
export async function requestRecovery(svc: Services, address: string) {
  const email = await svc.accounts.emails.byAddress(address);
  if (!email || !email.verified) return;
  const user = await svc.accounts.findUser(email.user_uuid);
  if (!user || user.disabled) return;
  const token = generateSecret();
  const expiredAt = isoAfter(RECOVERY_TTL_MS);
  await svc.accounts.emails.insertRecovery(user.uuid, digest(token), expiredAt, nowIso());
  const text =
    `Someone asked to reset the password of "${user.name}" on ${svc.config.publicUrl}.\n` +
    `If it was you, set a new password with\n\n  PUT ${svc.config.publicUrl}/api/auth/users/me/password\n  {"password": "<new password>", "recovery_token": "<token below>"}\n\n` +
    `Recovery token:\n${token}\n\nIt is valid until ${expiredAt} and can be used once. Otherwise ignore this mail.\n`;
  try {
    await svc.mailer.send({ to: email.address, subject: "Reset your password", text });
  } catch (err) {
    svc.log.error({ err: { message: (err as Error).message } }, "password reset mail could not be sent");
  }
}
