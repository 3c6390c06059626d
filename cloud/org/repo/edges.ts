// Storage of edges and their client secrets.
import { insertId, type Queryable } from "../../database/db.js";
import { orderBy, pagedQuery, Where, type Paging, type Sort } from "./sql.js";

export interface EdgeRow {
  uuid: string;
  name: string;
  nickname: string;
  description: string;
  owner_uuid: string | null;
  created_at: string;
  updated_at: string;
}

export interface EdgeSecretRow {
  id: number;
  edge_uuid: string;
  name: string;
  digest: string;
  /** Unused: secrets are never shown after creation (the column is kept for stores made before; written empty). */
  hint: string;
  last_used_at: string | null;
  created_at: string;
}

export interface EdgeFilter {
  uuids?: readonly string[];
  names?: readonly string[];
  nicknames?: readonly string[];
  ownerUuids?: readonly string[];
  hasOwner?: boolean;
}

const SORT = { name: "name", nickname: "nickname", created_at: "created_at", updated_at: "updated_at", uuid: "uuid" };

export class EdgeRepo {
  constructor(private readonly db: Queryable) {}

  list(f: EdgeFilter, sort: Sort, paging: Paging) {
    const w = new Where()
      .in("uuid", f.uuids)
      .names("name", f.names)
      .names("nickname", f.nicknames)
      .in("owner_uuid", f.ownerUuids);
    if (f.hasOwner !== undefined) w.add(f.hasOwner ? "owner_uuid IS NOT NULL" : "owner_uuid IS NULL");
    return pagedQuery<EdgeRow>(this.db, "edges", "*", w, orderBy(sort, SORT, "uuid"), paging);
  }
  get(uuid: string) {
    return this.db.get<EdgeRow>("SELECT * FROM edges WHERE uuid = ?", [uuid]);
  }
  getByName(name: string) {
    return this.db.get<EdgeRow>("SELECT * FROM edges WHERE name = ?", [name]);
  }
  async insert(e: EdgeRow) {
    await this.db.run(
      "INSERT INTO edges (uuid, name, nickname, description, owner_uuid, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      [e.uuid, e.name, e.nickname, e.description, e.owner_uuid, e.created_at, e.updated_at],
    );
  }
  async update(e: EdgeRow) {
    await this.db.run(
      "UPDATE edges SET name = ?, nickname = ?, description = ?, owner_uuid = ?, updated_at = ? WHERE uuid = ?",
      [e.name, e.nickname, e.description, e.owner_uuid, e.updated_at, e.uuid],
    );
  }
  async delete(uuid: string) {
    return (await this.db.run("DELETE FROM edges WHERE uuid = ?", [uuid])).changes > 0;
  }
  async clearOwner(owner: string) {
    await this.db.run("UPDATE edges SET owner_uuid = NULL WHERE owner_uuid = ?", [owner]);
  }

  // --- client secrets ---
  secrets(edge: string) {
    return this.db.all<EdgeSecretRow>("SELECT * FROM edge_secrets WHERE edge_uuid = ? ORDER BY id", [edge]);
  }
  secretsOf(edges: readonly string[]) {
    return this.db.all<EdgeSecretRow>(
      "SELECT * FROM edge_secrets WHERE edge_uuid IN (SELECT value FROM json_each(?)) ORDER BY id",
      [JSON.stringify(edges)],
    );
  }
  async insertSecret(s: Omit<EdgeSecretRow, "id">): Promise<number> {
    return insertId(
      this.db,
      "INSERT INTO edge_secrets (edge_uuid, name, digest, hint, last_used_at, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      [s.edge_uuid, s.name, s.digest, s.hint, s.last_used_at, s.created_at],
    );
  }
  async deleteSecret(edge: string, id: number) {
    return (await this.db.run("DELETE FROM edge_secrets WHERE edge_uuid = ? AND id = ?", [edge, id])).changes > 0;
  }
  async touchSecret(id: number, at: string) {
    await this.db.run("UPDATE edge_secrets SET last_used_at = ? WHERE id = ?", [at, id]);
  }
}
