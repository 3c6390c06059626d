// Storage of group and project members (one class, two tables of the same shape).
import type { Queryable } from "../../database/db.js";

export interface MemberRow {
  scope_uuid: string;
  user_uuid: string;
  role_uuids: string[];
  is_owner: boolean;
  created_at: string;
  updated_at: string;
}

interface RawRow {
  scope_uuid: string;
  user_uuid: string;
  role_uuids: string;
  is_owner: number;
  created_at: string;
  updated_at: string;
}

const decode = (r: RawRow): MemberRow => ({
  ...r,
  role_uuids: JSON.parse(r.role_uuids) as string[],
  is_owner: !!r.is_owner,
});

export class MemberRepo {
  private readonly cols: string;
  constructor(
    private readonly db: Queryable,
    readonly table: "group_members" | "project_members",
    readonly scopeCol: "group_uuid" | "project_uuid",
  ) {
    this.cols = `${scopeCol} AS scope_uuid, user_uuid, role_uuids, is_owner, created_at, updated_at`;
  }

  async all(scope: string): Promise<MemberRow[]> {
    const rows = await this.db.all<RawRow>(`SELECT ${this.cols} FROM ${this.table} WHERE ${this.scopeCol} = ?`, [
      scope,
    ]);
    return rows.map(decode);
  }
  async get(scope: string, user: string): Promise<MemberRow | undefined> {
    const r = await this.db.get<RawRow>(
      `SELECT ${this.cols} FROM ${this.table} WHERE ${this.scopeCol} = ? AND user_uuid = ?`,
      [scope, user],
    );
    return r && decode(r);
  }
  async upsert(m: MemberRow) {
    await this.db.run(
      `INSERT INTO ${this.table} (${this.scopeCol}, user_uuid, role_uuids, is_owner, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (${this.scopeCol}, user_uuid) DO UPDATE SET role_uuids = excluded.role_uuids, is_owner = excluded.is_owner, updated_at = excluded.updated_at`,
      [m.scope_uuid, m.user_uuid, JSON.stringify(m.role_uuids), m.is_owner ? 1 : 0, m.created_at, m.updated_at],
    );
  }
  /** Plain insert: a second membership fails with a UNIQUE violation (409 upstream). */
  async insert(m: MemberRow) {
    await this.db.run(
      `INSERT INTO ${this.table} (${this.scopeCol}, user_uuid, role_uuids, is_owner, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
      [m.scope_uuid, m.user_uuid, JSON.stringify(m.role_uuids), m.is_owner ? 1 : 0, m.created_at, m.updated_at],
    );
  }
  /** Returns false when the member is gone. */
  async update(m: MemberRow) {
    const r = await this.db.run(
      `UPDATE ${this.table} SET role_uuids = ?, is_owner = ?, updated_at = ? WHERE ${this.scopeCol} = ? AND user_uuid = ?`,
      [JSON.stringify(m.role_uuids), m.is_owner ? 1 : 0, m.updated_at, m.scope_uuid, m.user_uuid],
    );
    return r.changes > 0;
  }
  async delete(scope: string, user: string) {
    return (
      (await this.db.run(`DELETE FROM ${this.table} WHERE ${this.scopeCol} = ? AND user_uuid = ?`, [scope, user]))
        .changes > 0
    );
  }
  async ownerCount(scope: string) {
    return (
      (
        await this.db.get<{ n: number }>(
          `SELECT COUNT(*) AS n FROM ${this.table} WHERE ${this.scopeCol} = ? AND is_owner = 1`,
          [scope],
        )
      )?.n ?? 0
    );
  }
  async deleteUser(user: string) {
    await this.db.run(`DELETE FROM ${this.table} WHERE user_uuid = ?`, [user]);
  }
}
