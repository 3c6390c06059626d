// First-start seeding: the tenant, the catalogue's timestamps, and the super user `admin`.
// Runs on every start but only ever inserts what is missing; it never resets a password.
import crypto from "node:crypto";
import type { Services } from "../../services.js";
import { ROLES, ROLE_UUIDS, SCOPES } from "./catalogue.js";
import { generatePassword, hashPassword } from "./password-rules.js";
import { CatalogueRepo } from "../repo/catalogue.js";
import { UsersRepo } from "../repo/users.js";
import { TENANT_UUID, nowIso } from "./accounts-service.js";
import type { Timestamps } from "./views.js";
import { writeAdminPasswordFile } from "./admin-password-file.js";

const defDigest = (def: unknown) => crypto.createHash("sha256").update(JSON.stringify(def)).digest("hex");

export async function seedCatalogue(svc: Pick<Services, "db">): Promise<Map<string, Timestamps>> {
  const now = nowIso();
  await svc.db.transaction(async (tx) => {
    const repo = new CatalogueRepo(tx);
    await repo.ensureTenant(TENANT_UUID, "default", now);
    for (const s of SCOPES) await repo.upsert(s.uuid, "scope", defDigest(s), now);
    for (const r of ROLES) await repo.upsert(r.uuid, "role", defDigest(r), now);
  });
  const rows = await new CatalogueRepo(svc.db).entries();
  return new Map(rows.map((r) => [r.uuid, { created_at: r.created_at, updated_at: r.updated_at }]));
}

/** Creates `admin` when the database has no user at all. Returns the generated password, if any. */
export async function seedAdmin(
  svc: Pick<Services, "db" | "config" | "log">,
  out: (line: string) => void = (l) => process.stdout.write(l),
): Promise<void> {
  const users = new UsersRepo(svc.db);
  if ((await users.count()) > 0) return;
  const given = svc.config.adminPassword;
  const password = given || generatePassword();
  const hash = await hashPassword(password);
  const now = nowIso();
  const uuid = crypto.randomUUID();
  const lifetime = svc.config.passwordLifetimeDays;
  // Another process may have seeded meanwhile: then its password stands, not this one.
  const created = await svc.db.transaction(async (tx) => {
    const repo = new UsersRepo(tx);
    if ((await repo.count()) > 0) return false;
    await repo.insert({
      uuid,
      tenant_uuid: TENANT_UUID,
      name: "admin",
      nickname: "Administrator",
      description: "",
      disabled: 0,
      last_sign_in_at: null,
      created_at: now,
      updated_at: now,
    });
    await repo.insertPassword({
      user_uuid: uuid,
      hash,
      attempt_count: 0,
      last_attempt_at: null,
      is_temporary: given ? 0 : 1,
      expired_at:
        !given || lifetime <= 0
          ? null
          : new Date(Date.now() + lifetime * 86400_000).toISOString().replace(/\.\d{3}Z$/, "Z"),
      created_at: now,
      updated_at: now,
    });
    await repo.assignRole(uuid, ROLE_UUIDS.superUser, now);
    return true;
  });
  if (!created) return;
  svc.log.info({ user: "admin", temporary: !given }, "created the super user");
  if (given) return;
  const file = writeAdminPasswordFile(svc, password);
  out(
    `Created super user "admin" with temporary password: ${password}\n` +
      (file
        ? `(also in ${file}, readable by this user only, until it is changed; change it at first sign-in)\n`
        : "(change it at first sign-in; it is not shown again)\n"),
  );
}
