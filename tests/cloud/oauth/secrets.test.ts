// Client secrets, refresh tokens and codes are pasted into command lines and config files: a secret that started
// with "-" would be taken for an option (`--client-secret -x…` is refused as ambiguous).
import { expect, it } from "vitest";
import { generateSecret, hashSecret, verifySecret } from "../../../cloud/oauth/service/secrets.js";

it("draws 256-bit base64url secrets that never start with a dash", () => {
  // One in 64 base64url strings starts with "-": 4,000 draws hold about 62 such without the redraw.
  const secrets = Array.from({ length: 4_000 }, () => generateSecret());
  for (const s of secrets) {
    expect(s).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/);
    expect(verifySecret(s, hashSecret(s))).toBe(true);
  }
  expect(new Set(secrets).size).toBe(secrets.length);
  // The other 63 first characters all still occur.
  expect(new Set(secrets.map((s) => s[0])).size).toBe(63);
});
