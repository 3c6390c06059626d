// Storage of groups and projects (the organisation tree).
import type { Queryable } from "../../database/db.js";
import { orderBy, pagedQuery, Where, type Paging, type Sort } from "./sql.js";

export interface GroupRow {
  uuid: string;
  parent_uuid: string | null;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface ProjectRow {
  uuid: string;
  group_uuid: string;
  name: string;
  created_at: string;
  updated_at: string;
}

const SORT = { name: "name", created_at: "created_at", updated_at: "updated_at" };

export class GroupRepo {
  constructor(private readonly db: Queryable) {}

  list(f: { uuids?: readonly string[]; parent?: string }, sort: Sort, paging: Paging) {
    const w = new Where().in("uuid", f.uuids);
    if (f.parent !== undefined) w.add("parent_uuid = ?", f.parent);
    return pagedQuery<GroupRow>(this.db, "org_groups", "*", w, orderBy(sort, SORT, "uuid"), paging);
  }
  get(uuid: string) {
    return this.db.get<GroupRow>("SELECT * FROM org_groups WHERE uuid = ?", [uuid]);
  }
  async insert(g: GroupRow) {
    await this.db.run(
      "INSERT INTO org_groups (uuid, parent_uuid, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
      [g.uuid, g.parent_uuid, g.name, g.created_at, g.updated_at],
    );
  }
  async rename(uuid: string, name: string, at: string) {
    await this.db.run("UPDATE org_groups SET name = ?, updated_at = ? WHERE uuid = ?", [name, at, uuid]);
  }
  async delete(uuid: string) {
    return (await this.db.run("DELETE FROM org_groups WHERE uuid = ?", [uuid])).changes > 0;
  }
  async childCounts(uuid: string) {
    const g = await this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM org_groups WHERE parent_uuid = ?", [uuid]);
    const p = await this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM projects WHERE group_uuid = ?", [uuid]);
    return { groups: g?.n ?? 0, projects: p?.n ?? 0 };
  }
}

export class ProjectRepo {
  constructor(private readonly db: Queryable) {}

  list(f: { uuids?: readonly string[]; group?: string; sinceCreatedAt?: string }, sort: Sort, paging: Paging) {
    const w = new Where().in("uuid", f.uuids);
    if (f.group !== undefined) w.add("group_uuid = ?", f.group);
    if (f.sinceCreatedAt !== undefined)
      w.add("julianday(created_at) > julianday(?)", new Date(f.sinceCreatedAt).toISOString());
    return pagedQuery<ProjectRow>(this.db, "projects", "*", w, orderBy(sort, SORT, "uuid"), paging);
  }
  get(uuid: string) {
    return this.db.get<ProjectRow>("SELECT * FROM projects WHERE uuid = ?", [uuid]);
  }
  async insert(p: ProjectRow) {
    await this.db.run("INSERT INTO projects (uuid, group_uuid, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", [
      p.uuid,
      p.group_uuid,
      p.name,
      p.created_at,
      p.updated_at,
    ]);
  }
  async rename(uuid: string, name: string, at: string) {
    await this.db.run("UPDATE projects SET name = ?, updated_at = ? WHERE uuid = ?", [name, at, uuid]);
  }
  async delete(uuid: string) {
    return (await this.db.run("DELETE FROM projects WHERE uuid = ?", [uuid])).changes > 0;
  }
  async countIn(group: string) {
    return (
      (await this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM projects WHERE group_uuid = ?", [group]))?.n ?? 0
    );
  }
}
