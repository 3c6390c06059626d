// Password hashing (scrypt, per-user salt, timing-safe compare), the password policy with the
// typed errors of the intdash API, and generation of temporary passwords.
import crypto from "node:crypto";
import { promisify } from "node:util";

const scrypt = promisify(crypto.scrypt) as (
  pw: string,
  salt: Buffer,
  len: number,
  opts: crypto.ScryptOptions,
) => Promise<Buffer>;
const PARAMS = { N: 16384, r: 8, p: 1 };
const KEYLEN = 32;

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const key = await scrypt(password, salt, KEYLEN, { ...PARAMS, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString("base64")}$${key.toString("base64")}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, saltB64, keyB64] = stored.split("$");
  if (alg !== "scrypt" || !saltB64 || !keyB64) return false;
  const expected = Buffer.from(keyB64, "base64");
  const key = await scrypt(password, Buffer.from(saltB64, "base64"), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  });
  return crypto.timingSafeEqual(key, expected);
}

/** A hash that never verifies, for spending the same time on unknown user names. */
let dummyHash: Promise<string> | undefined;
export const dummyPasswordHash = () => (dummyHash ??= hashPassword(crypto.randomBytes(16).toString("hex")));

export const SYMBOLS = `!"#$%&'()*+,-./:;<=>?@{}|[]`;
const ALLOWED = new Set([..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", ...SYMBOLS]);

export const POLICY = {
  min_length: 8,
  max_length: 512,
  min_uppercase_alphabet_num: 1,
  min_lowercase_alphabet_num: 1,
  min_number_num: 1,
  min_symbol_num: 1,
} as const;

export interface PolicyError {
  type: string;
  value?: number;
  message: string;
}

/** Checks a candidate password; `username` and `matchesCurrent` add the two account-bound rules. */
export function checkPolicy(
  password: string,
  ctx: { username?: string; matchesCurrent?: boolean } = {},
): PolicyError[] {
  const errors: PolicyError[] = [];
  const chars = [...password];
  const count = (re: RegExp) => chars.filter((c) => re.test(c)).length;
  if (chars.length < POLICY.min_length)
    errors.push({
      type: "min_length",
      value: POLICY.min_length,
      message: `must be at least ${POLICY.min_length} characters`,
    });
  if (chars.length > POLICY.max_length)
    errors.push({
      type: "max_length",
      value: POLICY.max_length,
      message: `must be at most ${POLICY.max_length} characters`,
    });
  if (count(/[A-Z]/) < POLICY.min_uppercase_alphabet_num)
    errors.push({
      type: "min_uppercase_alphabet_num",
      value: POLICY.min_uppercase_alphabet_num,
      message: "needs an uppercase letter",
    });
  if (count(/[a-z]/) < POLICY.min_lowercase_alphabet_num)
    errors.push({
      type: "min_lowercase_alphabet_num",
      value: POLICY.min_lowercase_alphabet_num,
      message: "needs a lowercase letter",
    });
  if (count(/[0-9]/) < POLICY.min_number_num)
    errors.push({ type: "min_number_num", value: POLICY.min_number_num, message: "needs a digit" });
  if (chars.filter((c) => SYMBOLS.includes(c)).length < POLICY.min_symbol_num)
    errors.push({ type: "min_symbol_num", value: POLICY.min_symbol_num, message: `needs one of ${SYMBOLS}` });
  if (chars.some((c) => !ALLOWED.has(c)))
    errors.push({ type: "allowed_characters", message: `only ASCII letters, digits and ${SYMBOLS} are allowed` });
  if (ctx.username && ctx.username.length > 0 && password.toLowerCase().includes(ctx.username.toLowerCase()))
    errors.push({ type: "allowed_same_username", message: "must not contain the user name" });
  if (ctx.matchesCurrent)
    errors.push({ type: "allowed_same_previous_password", message: "must differ from the current password" });
  return errors;
}

/** A random password that satisfies the policy (20 characters). */
export function generatePassword(): string {
  const pick = (set: string) => set[crypto.randomInt(set.length)]!;
  const letters = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  const out = [pick("ABCDEFGHJKLMNPQRSTUVWXYZ"), pick("abcdefghijkmnopqrstuvwxyz"), pick("23456789"), pick("-.!@#")];
  while (out.length < 20) out.push(pick(letters));
  for (let i = out.length - 1; i > 0; i--) {
    const j = crypto.randomInt(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out.join("");
}

export const digest = (secret: string) => crypto.createHash("sha256").update(secret, "utf8").digest("hex");
