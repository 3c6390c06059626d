// Storage of authorization codes and refresh tokens (by digest only) and of their families:
// every refresh token and access token descending from one code or one password sign-in.
import type { Queryable } from "../../database/db.js";
import type { SubjectKind } from "../tokens/access-token.js";

export interface RefreshTokenRow {
  digest: string;
  family_id: string;
  client_id: string;
  subject_kind: SubjectKind;
  subject_uuid: string;
  scope: string;
  restricted: string | null;
  access_jti: string;
  access_expires_at: number;
  expires_at: number;
  created_at: number;
  used_at: number | null;
  revoked_at: number | null;
}

export interface CodeRow {
  digest: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string | null;
  user_uuid: string;
  family_id: string;
  expires_at: number;
  used_at: number | null;
}

export const grantsRepo = {
  async insertRefresh(db: Queryable, r: Omit<RefreshTokenRow, "used_at" | "revoked_at">): Promise<void> {
    await db.run(
      `INSERT INTO oauth_refresh_tokens (digest, family_id, client_id, subject_kind, subject_uuid, scope, restricted,
        access_jti, access_expires_at, expires_at, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
      [
        r.digest,
        r.family_id,
        r.client_id,
        r.subject_kind,
        r.subject_uuid,
        r.scope,
        r.restricted,
        r.access_jti,
        r.access_expires_at,
        r.expires_at,
        r.created_at,
      ],
    );
  },
  getRefresh: (db: Queryable, digest: string) =>
    db.get<RefreshTokenRow>("SELECT * FROM oauth_refresh_tokens WHERE digest = ?", [digest]),
  /** Marks a refresh token used; false when it already was (a concurrent or replayed use). */
  async markRefreshUsed(db: Queryable, digest: string, at: number): Promise<boolean> {
    return (
      (await db.run("UPDATE oauth_refresh_tokens SET used_at = ? WHERE digest = ? AND used_at IS NULL", [at, digest]))
        .changes === 1
    );
  },
  /** Revokes a family; returns the access tokens it issued that may still be alive. */
  async revokeFamily(db: Queryable, familyId: string, at: number): Promise<Array<{ jti: string; expiresAt: number }>> {
    await db.run("INSERT OR IGNORE INTO oauth_revoked_families (family_id, revoked_at) VALUES (?, ?)", [familyId, at]);
    await db.run("UPDATE oauth_refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL", [
      at,
      familyId,
    ]);
    const rows = await db.all<{ access_jti: string; access_expires_at: number }>(
      "SELECT access_jti, access_expires_at FROM oauth_refresh_tokens WHERE family_id = ? AND access_expires_at > ?",
      [familyId, at],
    );
    return rows.map((r) => ({ jti: r.access_jti, expiresAt: r.access_expires_at }));
  },
  async familyRevoked(db: Queryable, familyId: string): Promise<boolean> {
    return (await db.get("SELECT 1 AS x FROM oauth_revoked_families WHERE family_id = ?", [familyId])) !== undefined;
  },
  async familyOfAccessJti(db: Queryable, jti: string): Promise<string | undefined> {
    return (
      await db.get<{ family_id: string }>("SELECT family_id FROM oauth_refresh_tokens WHERE access_jti = ?", [jti])
    )?.family_id;
  },
  async purgeExpired(db: Queryable, nowSec: number): Promise<void> {
    await db.run("DELETE FROM oauth_refresh_tokens WHERE expires_at <= ? AND access_expires_at <= ?", [nowSec, nowSec]);
    await db.run("DELETE FROM oauth_codes WHERE expires_at <= ?", [nowSec - 3600]);
    await db.run("DELETE FROM oauth_sessions WHERE expires_at <= ?", [nowSec]);
    await db.run(
      "DELETE FROM oauth_revoked_families WHERE family_id NOT IN (SELECT family_id FROM oauth_refresh_tokens) AND revoked_at <= ?",
      [nowSec - 3600],
    );
  },

  async insertCode(db: Queryable, c: Omit<CodeRow, "used_at">): Promise<void> {
    await db.run(
      "INSERT INTO oauth_codes (digest, client_id, redirect_uri, code_challenge, user_uuid, family_id, expires_at) VALUES (?,?,?,?,?,?,?)",
      [c.digest, c.client_id, c.redirect_uri, c.code_challenge, c.user_uuid, c.family_id, c.expires_at],
    );
  },
  getCode: (db: Queryable, digest: string) => db.get<CodeRow>("SELECT * FROM oauth_codes WHERE digest = ?", [digest]),
  async markCodeUsed(db: Queryable, digest: string, at: number): Promise<boolean> {
    return (
      (await db.run("UPDATE oauth_codes SET used_at = ? WHERE digest = ? AND used_at IS NULL", [at, digest]))
        .changes === 1
    );
  },
};

export const sessionsRepo = {
  async insert(db: Queryable, digest: string, userUuid: string, createdAt: number, expiresAt: number): Promise<void> {
    await db.run("INSERT INTO oauth_sessions (digest, user_uuid, created_at, expires_at) VALUES (?,?,?,?)", [
      digest,
      userUuid,
      createdAt,
      expiresAt,
    ]);
  },
  get: (db: Queryable, digest: string) =>
    db.get<{ user_uuid: string; expires_at: number }>(
      "SELECT user_uuid, expires_at FROM oauth_sessions WHERE digest = ?",
      [digest],
    ),
  async delete(db: Queryable, digest: string): Promise<void> {
    await db.run("DELETE FROM oauth_sessions WHERE digest = ?", [digest]);
  },
};
