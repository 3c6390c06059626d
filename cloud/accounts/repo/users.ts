// SQL for users, their passwords and their roles. Nothing outside cloud/accounts/repo writes SQL
// for these tables.
import type { Params, Queryable } from "../../database/db.js";

export interface UserRow {
  uuid: string;
  tenant_uuid: string;
  name: string;
  nickname: string;
  description: string;
  disabled: number;
  last_sign_in_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface PasswordRow {
  user_uuid: string;
  hash: string;
  attempt_count: number;
  last_attempt_at: string | null;
  is_temporary: number;
  expired_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface UserFilter {
  uuids?: readonly string[];
  roleUuids?: readonly string[];
  names?: readonly { exact: boolean; value: string }[];
  nicknames?: readonly { exact: boolean; value: string }[];
  emails?: readonly { exact: boolean; value: string }[];
  disabled?: boolean;
  isSuper?: boolean;
  isTemporary?: boolean;
  minAttempts?: number;
  maxAttempts?: number;
  superRoleUuid: string;
}

const SORT_COLUMNS: Record<string, string> = {
  name: "u.name",
  nickname: "u.nickname",
  created_at: "u.created_at",
  updated_at: "u.updated_at",
  last_sign_in_at: "u.last_sign_in_at",
};
export const USER_SORT_KEYS = Object.keys(SORT_COLUMNS);

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => "\\" + c);

function nameClause(column: string, matches: readonly { exact: boolean; value: string }[], params: unknown[]): string {
  const parts = matches.map((m) => {
    if (m.exact) {
      params.push(m.value);
      return `${column} = ? COLLATE NOCASE`;
    }
    params.push(`%${likeEscape(m.value)}%`);
    return `${column} LIKE ? ESCAPE '\\'`;
  });
  return `(${parts.join(" OR ")})`;
}

export class UsersRepo {
  constructor(private readonly db: Queryable) {}

  insert(u: UserRow) {
    return this.db.run(
      "INSERT INTO users (uuid, tenant_uuid, name, nickname, description, disabled, last_sign_in_at, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
      [
        u.uuid,
        u.tenant_uuid,
        u.name,
        u.nickname,
        u.description,
        u.disabled,
        u.last_sign_in_at,
        u.created_at,
        u.updated_at,
      ],
    );
  }
  byUuid(uuid: string) {
    return this.db.get<UserRow>("SELECT * FROM users WHERE uuid = ?", [uuid]);
  }
  byName(name: string) {
    return this.db.get<UserRow>("SELECT * FROM users WHERE name = ? COLLATE NOCASE", [name]);
  }
  byUuids(uuids: readonly string[]) {
    if (uuids.length === 0) return Promise.resolve([] as UserRow[]);
    return this.db.all<UserRow>(`SELECT * FROM users WHERE uuid IN (${uuids.map(() => "?").join(",")})`, [...uuids]);
  }
  async update(
    uuid: string,
    fields: Partial<Pick<UserRow, "name" | "nickname" | "description" | "disabled" | "last_sign_in_at">>,
    now: string,
  ) {
    const keys = Object.keys(fields).filter((k) => (fields as Record<string, unknown>)[k] !== undefined);
    const sets = [...keys.map((k) => `${k} = ?`), "updated_at = ?"];
    const values = [...keys.map((k) => (fields as Record<string, string | number | null>)[k]!), now];
    await this.db.run(`UPDATE users SET ${sets.join(", ")} WHERE uuid = ?`, [...values, uuid]);
  }
  setLastSignIn(uuid: string, at: string) {
    return this.db.run("UPDATE users SET last_sign_in_at = ? WHERE uuid = ?", [at, uuid]);
  }
  delete(uuid: string) {
    return this.db.run("DELETE FROM users WHERE uuid = ?", [uuid]);
  }
  count() {
    return this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM users").then((r) => r?.n ?? 0);
  }

  /** One page of users matching the filter, and the total count. */
  async list(f: UserFilter, sort: { key: string; desc: boolean }, page: number, perPage: number) {
    const where: string[] = [];
    const params: unknown[] = [];
    if (f.uuids?.length) {
      where.push(`u.uuid IN (${f.uuids.map(() => "?").join(",")})`);
      params.push(...f.uuids);
    }
    if (f.roleUuids?.length) {
      where.push(
        `EXISTS (SELECT 1 FROM user_roles r WHERE r.user_uuid = u.uuid AND r.role_uuid IN (${f.roleUuids.map(() => "?").join(",")}))`,
      );
      params.push(...f.roleUuids);
    }
    if (f.names?.length) where.push(nameClause("u.name", f.names, params));
    if (f.nicknames?.length) where.push(nameClause("u.nickname", f.nicknames, params));
    if (f.emails?.length)
      where.push(
        `EXISTS (SELECT 1 FROM user_emails e WHERE e.user_uuid = u.uuid AND ${nameClause("e.address", f.emails, params)})`,
      );
    if (f.disabled !== undefined) {
      where.push("u.disabled = ?");
      params.push(f.disabled ? 1 : 0);
    }
    if (f.isSuper !== undefined) {
      where.push(
        `${f.isSuper ? "" : "NOT "}EXISTS (SELECT 1 FROM user_roles s WHERE s.user_uuid = u.uuid AND s.role_uuid = ?)`,
      );
      params.push(f.superRoleUuid);
    }
    if (f.isTemporary !== undefined) {
      where.push("p.is_temporary = ?");
      params.push(f.isTemporary ? 1 : 0);
    }
    if (f.minAttempts !== undefined) {
      where.push("p.attempt_count >= ?");
      params.push(f.minAttempts);
    }
    if (f.maxAttempts !== undefined) {
      where.push("p.attempt_count <= ?");
      params.push(f.maxAttempts);
    }
    const from = `FROM users u JOIN user_passwords p ON p.user_uuid = u.uuid ${where.length ? "WHERE " + where.join(" AND ") : ""}`;
    const total = (await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n ${from}`, params as Params))?.n ?? 0;
    const col = SORT_COLUMNS[sort.key] ?? "u.name";
    const rows = await this.db.all<UserRow>(
      `SELECT u.* ${from} ORDER BY ${col} ${sort.desc ? "DESC" : "ASC"}, u.uuid ASC LIMIT ? OFFSET ?`,
      [...params, perPage, (page - 1) * perPage] as Params,
    );
    return { rows, total };
  }

  // --- passwords ---
  insertPassword(p: PasswordRow) {
    return this.db.run(
      "INSERT INTO user_passwords (user_uuid, hash, attempt_count, last_attempt_at, is_temporary, expired_at, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
      [
        p.user_uuid,
        p.hash,
        p.attempt_count,
        p.last_attempt_at,
        p.is_temporary,
        p.expired_at,
        p.created_at,
        p.updated_at,
      ],
    );
  }
  password(uuid: string) {
    return this.db.get<PasswordRow>("SELECT * FROM user_passwords WHERE user_uuid = ?", [uuid]);
  }
  passwords(uuids: readonly string[]) {
    if (uuids.length === 0) return Promise.resolve([] as PasswordRow[]);
    return this.db.all<PasswordRow>(
      `SELECT * FROM user_passwords WHERE user_uuid IN (${uuids.map(() => "?").join(",")})`,
      [...uuids],
    );
  }
  setPassword(uuid: string, hash: string, temporary: boolean, expiredAt: string | null, now: string) {
    return this.db.run(
      "UPDATE user_passwords SET hash = ?, is_temporary = ?, expired_at = ?, attempt_count = 0, created_at = ?, updated_at = ? WHERE user_uuid = ?",
      [hash, temporary ? 1 : 0, expiredAt, now, now, uuid],
    );
  }
  /** Counts one failed sign-in and returns the new count. */
  async recordFailure(uuid: string, now: string): Promise<number> {
    await this.db.run(
      "UPDATE user_passwords SET attempt_count = attempt_count + 1, last_attempt_at = ?, updated_at = ? WHERE user_uuid = ?",
      [now, now, uuid],
    );
    return (await this.password(uuid))?.attempt_count ?? 0;
  }
  recordSuccess(uuid: string, now: string) {
    return this.db.run("UPDATE user_passwords SET attempt_count = 0, last_attempt_at = ? WHERE user_uuid = ?", [
      now,
      uuid,
    ]);
  }
  unlock(uuid: string, now: string) {
    return this.db.run("UPDATE user_passwords SET attempt_count = 0, updated_at = ? WHERE user_uuid = ?", [now, uuid]);
  }

  // --- roles ---
  roles(uuid: string) {
    return this.db
      .all<{ role_uuid: string }>(
        "SELECT role_uuid FROM user_roles WHERE user_uuid = ? ORDER BY created_at, role_uuid",
        [uuid],
      )
      .then((r) => r.map((x) => x.role_uuid));
  }
  rolesOf(uuids: readonly string[]) {
    if (uuids.length === 0) return Promise.resolve([] as { user_uuid: string; role_uuid: string }[]);
    return this.db.all<{ user_uuid: string; role_uuid: string }>(
      `SELECT user_uuid, role_uuid FROM user_roles WHERE user_uuid IN (${uuids.map(() => "?").join(",")}) ORDER BY created_at, role_uuid`,
      [...uuids],
    );
  }
  /** Returns false when the role was already assigned. */
  async assignRole(uuid: string, roleUuid: string, now: string): Promise<boolean> {
    const r = await this.db.run("INSERT OR IGNORE INTO user_roles (user_uuid, role_uuid, created_at) VALUES (?,?,?)", [
      uuid,
      roleUuid,
      now,
    ]);
    return r.changes > 0;
  }
  async unassignRole(uuid: string, roleUuid: string): Promise<boolean> {
    return (
      (await this.db.run("DELETE FROM user_roles WHERE user_uuid = ? AND role_uuid = ?", [uuid, roleUuid])).changes > 0
    );
  }
  /** Enabled users holding the role (used for the "last super user" rules). */
  countEnabledWithRole(roleUuid: string) {
    return this.db
      .get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM users u JOIN user_roles r ON r.user_uuid = u.uuid WHERE r.role_uuid = ? AND u.disabled = 0",
        [roleUuid],
      )
      .then((r) => r?.n ?? 0);
  }
}
