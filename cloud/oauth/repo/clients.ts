// Storage of OAuth2 clients owned by users and of their named, hashed secrets.
import { insertId, type Queryable } from "../../database/db.js";
import { parseNameFilter, parseSort } from "../../http/query.js";

export type AuthMethod = "client_secret_basic" | "client_secret_post" | "none" | "tls_client_auth";

export interface ClientRecord {
  client_id: string;
  name: string;
  grant_types: string[];
  token_endpoint_auth_method: AuthMethod;
  redirect_uris: string[];
  response_types: string[];
  scopes: string[];
  audiences: string[];
  tls_client_auth_subject_dn: string;
  user_uuid: string | null;
  created_at: string;
  updated_at: string;
}

export interface SecretRecord {
  id: number;
  client_id: string;
  name: string;
  digest: string;
  last_used_at: string | null;
  created_at: string;
}

type Row = Omit<ClientRecord, "grant_types" | "redirect_uris" | "response_types" | "scopes" | "audiences"> & {
  grant_types: string;
  redirect_uris: string;
  response_types: string;
  scopes: string;
  audiences: string;
};

const fromRow = (r: Row): ClientRecord => ({
  ...r,
  grant_types: JSON.parse(r.grant_types),
  redirect_uris: JSON.parse(r.redirect_uris),
  response_types: JSON.parse(r.response_types),
  scopes: JSON.parse(r.scopes),
  audiences: JSON.parse(r.audiences),
});

export interface ClientFilter {
  ids?: readonly string[];
  names?: readonly string[];
  userUuid?: string;
  sort?: string;
  page: number;
  perPage: number;
}

const SORT_COLUMNS: Record<string, string> = {
  name: "name",
  created_at: "created_at",
  updated_at: "updated_at",
  client_id: "client_id",
};

export const clientsRepo = {
  async insert(db: Queryable, c: ClientRecord): Promise<void> {
    await db.run(
      `INSERT INTO oauth_clients (client_id, name, grant_types, token_endpoint_auth_method, redirect_uris, response_types,
        scopes, audiences, tls_client_auth_subject_dn, user_uuid, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
      [
        c.client_id,
        c.name,
        JSON.stringify(c.grant_types),
        c.token_endpoint_auth_method,
        JSON.stringify(c.redirect_uris),
        JSON.stringify(c.response_types),
        JSON.stringify(c.scopes),
        JSON.stringify(c.audiences),
        c.tls_client_auth_subject_dn,
        c.user_uuid,
        c.created_at,
        c.updated_at,
      ],
    );
  },
  async get(db: Queryable, clientId: string): Promise<ClientRecord | undefined> {
    const r = await db.get<Row>("SELECT * FROM oauth_clients WHERE client_id = ?", [clientId]);
    return r && fromRow(r);
  },
  async update(
    db: Queryable,
    clientId: string,
    patch: { name?: string; redirect_uris?: readonly string[] },
    at: string,
  ): Promise<void> {
    const sets: string[] = ["updated_at = ?"];
    const params: (string | null)[] = [at];
    if (patch.name !== undefined) sets.push("name = ?"), params.push(patch.name);
    if (patch.redirect_uris !== undefined)
      sets.push("redirect_uris = ?"), params.push(JSON.stringify(patch.redirect_uris));
    await db.run(`UPDATE oauth_clients SET ${sets.join(", ")} WHERE client_id = ?`, [...params, clientId]);
  },
  async delete(db: Queryable, clientId: string): Promise<boolean> {
    return (await db.run("DELETE FROM oauth_clients WHERE client_id = ?", [clientId])).changes > 0;
  },
  async list(db: Queryable, f: ClientFilter): Promise<{ items: ClientRecord[]; total: number }> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (f.userUuid !== undefined) where.push("user_uuid = ?"), params.push(f.userUuid);
    if (f.ids?.length) where.push(`client_id IN (${f.ids.map(() => "?").join(",")})`), params.push(...f.ids);
    if (f.names?.length) {
      const ors = f.names.map((n) => {
        const m = parseNameFilter(n);
        if (m.exact) return (params.push(m.value), "name = ?");
        params.push(`%${m.value.replace(/[\\%_]/g, (c) => "\\" + c)}%`);
        return "name LIKE ? ESCAPE '\\'";
      });
      where.push(`(${ors.join(" OR ")})`);
    }
    const clause = where.length ? `WHERE ${where.join(" AND ")}` : "";
    const sort = parseSort(f.sort, "name+");
    const col = SORT_COLUMNS[sort.key] ?? "name";
    const total = (await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM oauth_clients ${clause}`, params))!.n;
    const rows = await db.all<Row>(
      `SELECT * FROM oauth_clients ${clause} ORDER BY ${col} ${sort.desc ? "DESC" : "ASC"}, client_id LIMIT ? OFFSET ?`,
      [...params, f.perPage, (f.page - 1) * f.perPage],
    );
    return { items: rows.map(fromRow), total };
  },

  async addSecret(db: Queryable, clientId: string, name: string, digest: string, at: string): Promise<SecretRecord> {
    const id = await insertId(
      db,
      "INSERT INTO oauth_client_secrets (client_id, name, digest, last_used_at, created_at) VALUES (?, ?, ?, NULL, ?)",
      [clientId, name, digest, at],
    );
    return { id, client_id: clientId, name, digest, last_used_at: null, created_at: at };
  },
  async secrets(db: Queryable, clientId: string): Promise<SecretRecord[]> {
    return db.all<SecretRecord>("SELECT * FROM oauth_client_secrets WHERE client_id = ? ORDER BY id", [clientId]);
  },
  async secretsOf(db: Queryable, clientIds: readonly string[]): Promise<SecretRecord[]> {
    if (!clientIds.length) return [];
    return db.all<SecretRecord>(
      `SELECT * FROM oauth_client_secrets WHERE client_id IN (${clientIds.map(() => "?").join(",")}) ORDER BY id`,
      [...clientIds],
    );
  },
  async deleteSecret(db: Queryable, clientId: string, id: number): Promise<boolean> {
    return (
      (await db.run("DELETE FROM oauth_client_secrets WHERE client_id = ? AND id = ?", [clientId, id])).changes > 0
    );
  },
  async touchSecrets(db: Queryable, uses: Array<{ id: number; at: string }>): Promise<void> {
    for (const u of uses) await db.run("UPDATE oauth_client_secrets SET last_used_at = ? WHERE id = ?", [u.at, u.id]);
  },
};
