// PKCE (RFC 7636) with S256 only: the plain method would let a stolen challenge redeem the code.
import crypto from "node:crypto";
import { safeEqual } from "./secrets.js";

export const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** A S256 challenge is the base64url SHA-256 of a verifier: always 43 characters. */
export const CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;

export const s256 = (verifier: string) => crypto.createHash("sha256").update(verifier, "ascii").digest("base64url");

export const verifierMatches = (verifier: string, challenge: string) =>
  VERIFIER.test(verifier) && safeEqual(s256(verifier), challenge);
