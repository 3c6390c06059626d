// SQL for e-mail addresses, their verification tokens and password-recovery tokens
// (tokens are stored as SHA-256 digests).
import { insertId, type Queryable } from "../../database/db.js";

export interface EmailRow {
  id: number;
  user_uuid: string;
  address: string;
  verified: number;
  created_at: string;
  updated_at: string;
}

export interface VerificationRow {
  id: number;
  email_id: number;
  token_digest: string;
  expired_at: string;
  used_at: string | null;
  created_at: string;
  updated_at: string;
}

export class EmailsRepo {
  constructor(private readonly db: Queryable) {}

  async insert(userUuid: string, address: string, now: string): Promise<number> {
    return insertId(
      this.db,
      "INSERT INTO user_emails (user_uuid, address, verified, created_at, updated_at) VALUES (?,?,0,?,?)",
      [userUuid, address, now, now],
    );
  }
  byId(userUuid: string, id: number) {
    return this.db.get<EmailRow>("SELECT * FROM user_emails WHERE user_uuid = ? AND id = ?", [userUuid, id]);
  }
  byAddress(address: string) {
    return this.db.get<EmailRow>("SELECT * FROM user_emails WHERE address = ? COLLATE NOCASE", [address]);
  }
  ofUsers(uuids: readonly string[]) {
    if (uuids.length === 0) return Promise.resolve([] as EmailRow[]);
    return this.db.all<EmailRow>(
      `SELECT * FROM user_emails WHERE user_uuid IN (${uuids.map(() => "?").join(",")}) ORDER BY id`,
      [...uuids],
    );
  }
  /** A new address is unverified again, and its pending verifications are void. */
  async changeAddress(id: number, address: string, now: string) {
    await this.db.run("UPDATE user_emails SET address = ?, verified = 0, updated_at = ? WHERE id = ?", [
      address,
      now,
      id,
    ]);
    await this.db.run("DELETE FROM email_verifications WHERE email_id = ?", [id]);
  }
  markVerified(id: number, now: string) {
    return this.db.run("UPDATE user_emails SET verified = 1, updated_at = ? WHERE id = ?", [now, id]);
  }
  async delete(userUuid: string, id: number): Promise<boolean> {
    return (await this.db.run("DELETE FROM user_emails WHERE user_uuid = ? AND id = ?", [userUuid, id])).changes > 0;
  }

  async insertVerification(
    emailId: number,
    tokenDigest: string,
    expiredAt: string,
    now: string,
  ): Promise<VerificationRow> {
    const id = await insertId(
      this.db,
      "INSERT INTO email_verifications (email_id, token_digest, expired_at, used_at, created_at, updated_at) VALUES (?,?,?,NULL,?,?)",
      [emailId, tokenDigest, expiredAt, now, now],
    );
    return {
      id,
      email_id: emailId,
      token_digest: tokenDigest,
      expired_at: expiredAt,
      used_at: null,
      created_at: now,
      updated_at: now,
    };
  }
  verificationByDigest(tokenDigest: string) {
    return this.db.get<VerificationRow>("SELECT * FROM email_verifications WHERE token_digest = ?", [tokenDigest]);
  }
  /** Marks a verification used; false when it was already used (single use, even under races). */
  async useVerification(id: number, now: string): Promise<boolean> {
    return (
      (
        await this.db.run(
          "UPDATE email_verifications SET used_at = ?, updated_at = ? WHERE id = ? AND used_at IS NULL",
          [now, now, id],
        )
      ).changes > 0
    );
  }
  emailById(id: number) {
    return this.db.get<EmailRow>("SELECT * FROM user_emails WHERE id = ?", [id]);
  }

  insertRecovery(userUuid: string, tokenDigest: string, expiredAt: string, now: string) {
    return this.db.run(
      "INSERT INTO password_recoveries (token_digest, user_uuid, expired_at, used_at, created_at) VALUES (?,?,?,NULL,?)",
      [tokenDigest, userUuid, expiredAt, now],
    );
  }
  recoveryByDigest(tokenDigest: string) {
    return this.db.get<{ token_digest: string; user_uuid: string; expired_at: string; used_at: string | null }>(
      "SELECT * FROM password_recoveries WHERE token_digest = ?",
      [tokenDigest],
    );
  }
  async useRecovery(tokenDigest: string, now: string): Promise<boolean> {
    return (
      (
        await this.db.run("UPDATE password_recoveries SET used_at = ? WHERE token_digest = ? AND used_at IS NULL", [
          now,
          tokenDigest,
        ])
      ).changes > 0
    );
  }
}
