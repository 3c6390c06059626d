// User operations: list, create (temporary password + confirmation mail), update, delete,
// enable/disable, with the rules that protect the last enabled super user and the caller.
import crypto from "node:crypto";
import { Conflict, Forbidden, Invalid } from "../../errors.js";
import { pageInfo, parseNameFilter, parseSort } from "../../http/query.js";
import type { Services } from "../../services.js";
import { isUniqueViolation } from "../../database/db.js";
import { ROLE_UUIDS, findRole } from "./catalogue.js";
import { generatePassword, hashPassword } from "./password-rules.js";
import { EmailsRepo } from "../repo/emails.js";
import { UsersRepo, type UserRow } from "../repo/users.js";
import { TENANT_UUID, nowIso } from "./accounts-service.js";
import { userView } from "./views.js";
import { requireUser, passwordExpiry } from "./account-helpers.js";
import { startVerification } from "./emails.js";

/** User resources for rows, loading passwords, e-mails and roles in three queries. */
export async function userResources(svc: Services, rows: UserRow[]) {
  const uuids = rows.map((r) => r.uuid);
  const a = svc.accounts;
  const [passwords, emails, roles] = await Promise.all([
    a.users.passwords(uuids),
    a.emails.ofUsers(uuids),
    a.users.rolesOf(uuids),
  ]);
  const pw = new Map(passwords.map((p) => [p.user_uuid, p]));
  return rows.map((u) => {
    const r = roles.filter((x) => x.user_uuid === u.uuid).map((x) => x.role_uuid);
    return userView(
      u,
      pw.get(u.uuid)!,
      emails.filter((e) => e.user_uuid === u.uuid),
      r,
      r.includes(ROLE_UUIDS.superUser),
    );
  });
}

export interface ListUsersInput {
  "uuid[]"?: readonly string[];
  "role_uuid[]"?: readonly string[];
  "name[]"?: readonly string[];
  "nickname[]"?: readonly string[];
  "email[]"?: readonly string[];
  disabled?: boolean;
  is_super?: boolean;
  is_temporary?: boolean;
  min_sign_in_attempt_count?: number;
  max_sign_in_attempt_count?: number;
  sort?: string;
  page: number;
  per_page: number;
}

export async function listUsers(svc: Services, q: ListUsersInput) {
  const { rows, total } = await svc.accounts.users.list(
    {
      uuids: q["uuid[]"],
      roleUuids: q["role_uuid[]"],
      names: q["name[]"]?.map(parseNameFilter),
      nicknames: q["nickname[]"]?.map(parseNameFilter),
      emails: q["email[]"]?.map(parseNameFilter),
      disabled: q.disabled,
      isSuper: q.is_super,
      isTemporary: q.is_temporary,
      minAttempts: q.min_sign_in_attempt_count,
      maxAttempts: q.max_sign_in_attempt_count,
      superRoleUuid: ROLE_UUIDS.superUser,
    },
    parseSort(q.sort, "name+"),
    q.page,
    q.per_page,
  );
  return { items: await userResources(svc, rows), page: pageInfo(total, q.page, q.per_page) };
}

/** Roles a user may hold directly (the owner role comes only from group/project ownership). */
export function checkAssignableRole(roleUuid: string, field = "role_uuids") {
  if (!findRole(roleUuid)) throw new Invalid(`unknown role ${roleUuid}`, { [field]: `unknown role ${roleUuid}` });
  if (roleUuid === ROLE_UUIDS.owner)
    throw new Invalid("the owner role is held through group or project ownership", {
      [field]: "the owner role cannot be assigned",
    });
}

export async function createUser(
  svc: Services,
  body: { name: string; nickname?: string; description?: string; role_uuids: readonly string[]; email?: string },
) {
  for (const r of body.role_uuids) checkAssignableRole(r);
  if (await svc.accounts.findUserByName(body.name))
    throw new Conflict("the user name is taken", { name: "already exist" });
  if (body.email && (await svc.accounts.emails.byAddress(body.email)))
    throw new Conflict("the e-mail address is taken", { email: "already exist" });
  const password = generatePassword();
  const hash = await hashPassword(password);
  const now = nowIso();
  const uuid = crypto.randomUUID();
  let emailId: number | undefined;
  try {
    await svc.db.transaction(async (tx) => {
      const users = new UsersRepo(tx);
      await users.insert({
        uuid,
        tenant_uuid: TENANT_UUID,
        name: body.name,
        nickname: body.nickname ?? "",
        description: body.description ?? "",
        disabled: 0,
        last_sign_in_at: null,
        created_at: now,
        updated_at: now,
      });
      await users.insertPassword({
        user_uuid: uuid,
        hash,
        attempt_count: 0,
        last_attempt_at: null,
        is_temporary: 1,
        expired_at: passwordExpiry(svc),
        created_at: now,
        updated_at: now,
      });
      for (const r of new Set(body.role_uuids)) await users.assignRole(uuid, r, now);
      if (body.email) {
        emailId = await new EmailsRepo(tx).insert(uuid, body.email, now);
      }
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw new Conflict("the user name or e-mail address is taken", { name: "already exist" });
    throw err;
  }
  if (emailId !== undefined) await startVerification(svc, uuid, emailId, "welcome");
  return (await svc.accounts.userResource(uuid, password))!;
}

export async function updateUser(
  svc: Services,
  uuid: string,
  body: { name?: string; nickname?: string; description?: string },
) {
  const user = await requireUser(svc, uuid);
  if (
    body.name !== undefined &&
    body.name.toLowerCase() !== user.name.toLowerCase() &&
    (await svc.accounts.findUserByName(body.name))
  )
    throw new Conflict("the user name is taken", { name: "already exist" });
  try {
    await svc.accounts.users.update(
      uuid,
      { name: body.name, nickname: body.nickname, description: body.description },
      nowIso(),
    );
  } catch (err) {
    if (isUniqueViolation(err)) throw new Conflict("the user name is taken", { name: "already exist" });
    throw err;
  }
  return (await svc.accounts.userResource(uuid))!;
}

/** Refuses to remove the last enabled super user's powers (delete, disable, unassign). */
export async function guardLastSuper(svc: Services, user: UserRow, what: string) {
  if (user.disabled) return;
  if (!(await svc.accounts.isSuper(user.uuid))) return;
  if ((await svc.accounts.users.countEnabledWithRole(ROLE_UUIDS.superUser)) <= 1)
    throw new Forbidden(`cannot ${what} the last enabled super user`);
}

export async function deleteUser(svc: Services, callerUuid: string | undefined, uuid: string) {
  const user = await requireUser(svc, uuid);
  if (callerUuid === uuid) throw new Forbidden("you cannot delete yourself");
  await guardLastSuper(svc, user, "delete");
  await svc.accounts.users.delete(uuid);
  await svc.accounts.userDeleted(uuid);
}

export async function setDisabled(svc: Services, callerUuid: string | undefined, uuid: string, disabled: boolean) {
  const user = await requireUser(svc, uuid);
  if (disabled) {
    if (callerUuid === uuid) throw new Forbidden("you cannot disable yourself");
    await guardLastSuper(svc, user, "disable");
  }
  await svc.accounts.users.update(uuid, { disabled: disabled ? 1 : 0 }, nowIso());
  return (await svc.accounts.userResource(uuid))!;
}
