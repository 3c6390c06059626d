// High-entropy secrets, every one the cloud makes (client and edge secrets, refresh tokens, codes, session ids;
// the accounts' API, verification and recovery tokens; webhook secrets): 256 random bits. All but the webhooks'
// (which sign with theirs) are stored only as SHA-256 digests. A fast digest is safe here because guessing a
// 256-bit value is infeasible; passwords, which are low-entropy, use the slow KDF of the accounts area instead.
import crypto from "node:crypto";

/**
 * A new random secret, base64url (43 characters, 256 bits). One in 64 would start with "-", which command lines
 * take for an option (`--client-secret -x…` is refused as ambiguous), so those are drawn again: a fiftieth of a
 * bit of entropy for a secret that pastes anywhere.
 */
export function generateSecret(bytes = 32): string {
  for (;;) {
    const secret = crypto.randomBytes(bytes).toString("base64url");
    if (!secret.startsWith("-")) return secret;
  }
}

/** The stored form of a secret: hex SHA-256. */
export const hashSecret = (secret: string): string => crypto.createHash("sha256").update(secret, "utf8").digest("hex");

/** Constant-time comparison of a presented secret with a stored digest. */
export function verifySecret(secret: string, digest: string): boolean {
  const a = crypto.createHash("sha256").update(secret, "utf8").digest();
  const b = Buffer.from(digest, "hex");
  return b.length === a.length && crypto.timingSafeEqual(a, b);
}

/** Constant-time equality of two short strings (CSRF tokens, PKCE challenges). */
export function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash("sha256").update(a).digest();
  const hb = crypto.createHash("sha256").update(b).digest();
  return crypto.timingSafeEqual(ha, hb) && a.length === b.length;
}
