// SQL for API tokens. Only the SHA-256 digest of a token is stored.
import { insertId, type Queryable } from "../../database/db.js";

export interface ApiTokenRow {
  id: number;
  user_uuid: string;
  name: string;
  digest: string;
  last_used_at: string | null;
  expired_at: string | null;
  created_at: string;
  updated_at: string;
}

export class ApiTokensRepo {
  constructor(private readonly db: Queryable) {}

  async insert(t: Omit<ApiTokenRow, "id">): Promise<number> {
    return insertId(
      this.db,
      "INSERT INTO api_tokens (user_uuid, name, digest, last_used_at, expired_at, created_at, updated_at) VALUES (?,?,?,?,?,?,?)",
      [t.user_uuid, t.name, t.digest, t.last_used_at, t.expired_at, t.created_at, t.updated_at],
    );
  }
  byDigest(digest: string) {
    return this.db.get<ApiTokenRow>("SELECT * FROM api_tokens WHERE digest = ?", [digest]);
  }
  byId(userUuid: string, id: number) {
    return this.db.get<ApiTokenRow>("SELECT * FROM api_tokens WHERE user_uuid = ? AND id = ?", [userUuid, id]);
  }
  async list(userUuid: string, page: number, perPage: number) {
    const total =
      (await this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM api_tokens WHERE user_uuid = ?", [userUuid]))?.n ??
      0;
    const rows = await this.db.all<ApiTokenRow>(
      "SELECT * FROM api_tokens WHERE user_uuid = ? ORDER BY id LIMIT ? OFFSET ?",
      [userUuid, perPage, (page - 1) * perPage],
    );
    return { rows, total };
  }
  rename(userUuid: string, id: number, name: string, now: string) {
    return this.db.run("UPDATE api_tokens SET name = ?, updated_at = ? WHERE user_uuid = ? AND id = ?", [
      name,
      now,
      userUuid,
      id,
    ]);
  }
  async delete(userUuid: string, id: number): Promise<boolean> {
    return (await this.db.run("DELETE FROM api_tokens WHERE user_uuid = ? AND id = ?", [userUuid, id])).changes > 0;
  }
  touch(id: number, at: string) {
    return this.db.run(
      "UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
      [at, id, at],
    );
  }
}
