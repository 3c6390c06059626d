// E-mail operations: set, change (becomes unverified + new mail), delete, send a verification
// mail, and verify with a single-use, expiring token that is stored only as a digest.
import { Conflict, Invalid, NotFound } from "../../errors.js";
import type { Services } from "../../services.js";
import { isUniqueViolation } from "../../database/db.js";
import { generateSecret } from "../../oauth/service/secrets.js";
import { digest } from "./password-rules.js";
import type { EmailRow } from "../repo/emails.js";
import { nowIso } from "./accounts-service.js";
import { emailView, verificationView } from "./views.js";
import { isoAfter, requireUser } from "./account-helpers.js";

export const VERIFICATION_TTL_MS = 24 * 3600_000;

/** The link in verification mails (GET answers with the verified Email). */
export const verificationLink = (svc: Services, emailId: number, token: string) =>
  `${svc.config.publicUrl}/api/auth/users/emails/verified?email_id=${emailId}&verification_token=${encodeURIComponent(token)}`;

/** Creates a verification token and mails it; a mail failure is logged, not fatal. */
export async function startVerification(svc: Services, userUuid: string, emailId: number, kind: "welcome" | "verify") {
  const email = (await svc.accounts.emails.byId(userUuid, emailId))!;
  const user = (await svc.accounts.findUser(userUuid))!;
  const token = generateSecret();
  const now = nowIso();
  const expiredAt = isoAfter(VERIFICATION_TTL_MS);
  const row = await svc.accounts.emails.insertVerification(emailId, digest(token), expiredAt, now);
  const intro =
    kind === "welcome"
      ? `An account "${user.name}" was created for you on ${svc.config.publicUrl}.\nYour administrator gives you its temporary password.\n\n`
      : "";
  const text =
    `${intro}Please confirm that ${email.address} is your e-mail address by opening this link:\n\n` +
    `${verificationLink(svc, emailId, token)}\n\n` +
    `Or send this verification token (e-mail id ${emailId}):\n${token}\n\nThe token is valid until ${expiredAt} and can be used once.\n`;
  const subject = kind === "welcome" ? "Welcome: confirm your e-mail address" : "Confirm your e-mail address";
  try {
    await svc.mailer.send({ to: email.address, subject, text });
  } catch (err) {
    svc.log.error(
      { err: { message: (err as Error).message }, email_id: emailId },
      "verification mail could not be sent",
    );
  }
  return verificationView(row);
}

async function requireEmail(svc: Services, userUuid: string, id: number): Promise<EmailRow> {
  const e = await svc.accounts.emails.byId(userUuid, id);
  if (!e) throw new NotFound("e-mail address not found");
  return e;
}

const taken = () => new Conflict("the e-mail address is taken", { address: "already exist" });

export async function createEmail(svc: Services, userUuid: string, address: string) {
  await requireUser(svc, userUuid);
  if (await svc.accounts.emails.byAddress(address)) throw taken();
  let id: number;
  try {
    id = await svc.accounts.emails.insert(userUuid, address, nowIso());
  } catch (err) {
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
  await startVerification(svc, userUuid, id, "verify");
  return emailView((await svc.accounts.emails.byId(userUuid, id))!);
}

export async function updateEmail(svc: Services, userUuid: string, id: number, address: string) {
  await requireUser(svc, userUuid);
  const email = await requireEmail(svc, userUuid, id);
  if (email.address === address) return emailView(email);
  const other = await svc.accounts.emails.byAddress(address);
  if (other && other.id !== id) throw taken();
  try {
    await svc.accounts.emails.changeAddress(id, address, nowIso());
  } catch (err) {
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
  await startVerification(svc, userUuid, id, "verify");
  return emailView((await svc.accounts.emails.byId(userUuid, id))!);
}

export async function deleteEmail(svc: Services, userUuid: string, id: number) {
  await requireUser(svc, userUuid);
  if (!(await svc.accounts.emails.delete(userUuid, id))) throw new NotFound("e-mail address not found");
}

export async function sendVerification(svc: Services, userUuid: string, id: number) {
  await requireUser(svc, userUuid);
  const email = await requireEmail(svc, userUuid, id);
  if (email.verified) throw new Invalid("the e-mail address is already verified");
  return startVerification(svc, userUuid, id, "verify");
}

const invalidToken = () =>
  new Invalid("invalid or expired verification token", { verification_token: "invalid or expired" });

/** Verifies with a token; `scope` limits it to one user's e-mail (by id) when given. */
export async function verifyEmail(svc: Services, token: string, scope?: { userUuid: string; emailId?: number }) {
  const v = await svc.accounts.emails.verificationByDigest(digest(token));
  if (!v || v.used_at || Date.parse(v.expired_at) <= Date.now()) throw invalidToken();
  const email = await svc.accounts.emails.emailById(v.email_id);
  if (!email) throw invalidToken();
  if (scope && (email.user_uuid !== scope.userUuid || (scope.emailId !== undefined && scope.emailId !== email.id)))
    throw invalidToken();
  if (!(await svc.accounts.emails.useVerification(v.id, nowIso()))) throw invalidToken();
  await svc.accounts.emails.markVerified(email.id, nowIso());
  return emailView((await svc.accounts.emails.emailById(email.id))!);
}
