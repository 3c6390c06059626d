// Revoked access-token ids (jti), kept until the token would have expired anyway.
import type { Queryable } from "../../database/db.js";

export const revokedRepo = {
  async add(db: Queryable, entries: Array<{ jti: string; expiresAt: number }>): Promise<void> {
    for (const e of entries)
      await db.run("INSERT OR IGNORE INTO oauth_revoked_jtis (jti, expires_at) VALUES (?, ?)", [e.jti, e.expiresAt]);
  },
  /** Entries added after `afterSeq` that have not expired (for polling by other instances). */
  async since(
    db: Queryable,
    afterSeq: number,
    nowSec: number,
  ): Promise<Array<{ seq: number; jti: string; expires_at: number }>> {
    return db.all("SELECT seq, jti, expires_at FROM oauth_revoked_jtis WHERE seq > ? AND expires_at > ? ORDER BY seq", [
      afterSeq,
      nowSec,
    ]);
  },
  async maxSeq(db: Queryable): Promise<number> {
    return (await db.get<{ m: number | null }>("SELECT MAX(seq) AS m FROM oauth_revoked_jtis"))?.m ?? 0;
  },
  async purgeExpired(db: Queryable, nowSec: number): Promise<void> {
    await db.run("DELETE FROM oauth_revoked_jtis WHERE expires_at <= ?", [nowSec]);
  },
};
