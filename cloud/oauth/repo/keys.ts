// Storage of signing keys. Private keys stay in the database (data dir is 0700); only the public
// halves are ever published.
import type { Queryable } from "../../database/db.js";

export interface SigningKeyRow {
  kid: string;
  alg: string;
  private_jwk: string;
  public_jwk: string;
  created_at: string;
  superseded_at: string | null;
  retire_after: string | null;
}

export const keysRepo = {
  /** Keys still published: the current one and superseded ones whose tokens may still be alive. */
  async published(db: Queryable, now = new Date()): Promise<SigningKeyRow[]> {
    return db.all<SigningKeyRow>(
      "SELECT * FROM oauth_signing_keys WHERE retire_after IS NULL OR retire_after > ? ORDER BY created_at DESC, rowid DESC",
      [now.toISOString()],
    );
  },
  async insert(db: Queryable, row: SigningKeyRow): Promise<void> {
    await db.run(
      "INSERT INTO oauth_signing_keys (kid, alg, private_jwk, public_jwk, created_at, superseded_at, retire_after) VALUES (?, ?, ?, ?, ?, NULL, NULL)",
      [row.kid, row.alg, row.private_jwk, row.public_jwk, row.created_at],
    );
  },
  /** Marks every current key as superseded, keeping it published until retireAfter. */
  async supersedeCurrent(db: Queryable, at: Date, retireAfter: Date): Promise<void> {
    await db.run("UPDATE oauth_signing_keys SET superseded_at = ?, retire_after = ? WHERE superseded_at IS NULL", [
      at.toISOString(),
      retireAfter.toISOString(),
    ]);
  },
  /** Pushes a superseded key's retirement out to at least `until` (never earlier than it was). */
  async keepPublishedUntil(db: Queryable, kid: string, until: Date): Promise<void> {
    await db.run(
      "UPDATE oauth_signing_keys SET retire_after = MAX(retire_after, ?) WHERE kid = ? AND retire_after IS NOT NULL",
      [until.toISOString(), kid],
    );
  },
  async deleteRetired(db: Queryable, now = new Date()): Promise<number> {
    return (
      await db.run("DELETE FROM oauth_signing_keys WHERE retire_after IS NOT NULL AND retire_after <= ?", [
        now.toISOString(),
      ])
    ).changes;
  },
};
