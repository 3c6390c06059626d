// Access tokens are JWTs (RFC 9068 shape) signed with the current key. Signing and verifying use
// node:crypto directly with a cached key and header, which is several times faster than building a
// JWS through a generic library on every request; any JOSE library verifies the result (tests use jose).
import crypto from "node:crypto";
import type { KeyStore } from "./keystore.js";

export type SubjectKind = "user" | "edge";

export interface AccessTokenClaims {
  iss: string;
  sub: string;
  client_id: string;
  scope: string;
  iat: number;
  exp: number;
  jti: string;
  /** Whether sub names a user or an edge. */
  sub_kind: SubjectKind;
  /** Present on tokens of users whose password is temporary or expired. */
  restricted?: "password_change";
}

export function signAccessToken(keys: KeyStore, claims: AccessTokenClaims): string {
  const key = keys.signing;
  const signingInput = `${key.headerB64}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}`;
  const sig = crypto.sign("sha256", Buffer.from(signingInput), { key: key.privateKey, dsaEncoding: "ieee-p1363" });
  return `${signingInput}.${sig.toString("base64url")}`;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/** Returns the claims of a well-signed, unexpired token issued by `issuer`, else undefined. */
export function verifyAccessToken(
  keys: KeyStore,
  token: string,
  issuer: string,
  nowSec = Math.floor(Date.now() / 1000),
): AccessTokenClaims | undefined {
  if (token.length > 8192) return undefined;
  const parts = token.split(".");
  if (parts.length !== 3 || !parts.every((p) => B64URL.test(p))) return undefined;
  let header: { alg?: unknown; kid?: unknown; typ?: unknown };
  let claims: AccessTokenClaims;
  try {
    header = JSON.parse(Buffer.from(parts[0]!, "base64url").toString("utf8"));
    claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  // Only our algorithm: never "none", never an algorithm chosen by the token.
  if (header.alg !== "ES256" || typeof header.kid !== "string" || header.typ !== "at+jwt") return undefined;
  const key = keys.verifyingKey(header.kid);
  if (!key) return undefined;
  const ok = crypto.verify(
    "sha256",
    Buffer.from(`${parts[0]}.${parts[1]}`),
    { key, dsaEncoding: "ieee-p1363" },
    Buffer.from(parts[2]!, "base64url"),
  );
  if (!ok) return undefined;
  if (typeof claims !== "object" || claims === null) return undefined;
  if (claims.iss !== issuer || typeof claims.sub !== "string" || typeof claims.jti !== "string") return undefined;
  if (typeof claims.exp !== "number" || claims.exp <= nowSec) return undefined;
  if (claims.sub_kind !== "user" && claims.sub_kind !== "edge") return undefined;
  return claims;
}
