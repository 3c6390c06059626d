// The sign-in session: after one successful sign-in on the page, later authorization requests from
// the same browser skip the page. The cookie holds a random id; the database holds only its digest.
import type { Context } from "koa";
import type { Services } from "../../services.js";
import type { AccountUser } from "../service/accounts-port.js";
import { sessionsRepo } from "../repo/grants.js";
import { generateSecret, hashSecret } from "../service/secrets.js";
import { isHttps, setCookie } from "./cookies.js";

export const SESSION_COOKIE = "oauth_session";
export const SESSION_PATH = "/api/auth/oauth2";
export const SESSION_TTL_S = 12 * 3600;

export async function startSession(ctx: Context, svc: Services, userUuid: string): Promise<void> {
  const id = generateSecret();
  const now = Math.floor(Date.now() / 1000);
  await sessionsRepo.insert(svc.db, hashSecret(id), userUuid, now, now + SESSION_TTL_S);
  setCookie(ctx, SESSION_COOKIE, id, {
    path: SESSION_PATH,
    sameSite: "Lax",
    secure: isHttps(svc.config.publicUrl),
    maxAgeSeconds: SESSION_TTL_S,
  });
}

/** The signed-in user of this browser, if its session is valid and the user may still sign in. */
export async function sessionUser(ctx: Context, svc: Services): Promise<AccountUser | undefined> {
  const id = ctx.cookies.get(SESSION_COOKIE);
  if (!id || id.length > 128) return undefined;
  const row = await sessionsRepo.get(svc.db, hashSecret(id));
  if (!row || row.expires_at <= Math.floor(Date.now() / 1000)) return undefined;
  const user = await svc.oauth.accounts.user(row.user_uuid);
  return user && !user.disabled ? user : undefined;
}

/**
 * Ends this browser's sign-in session when it belongs to `userUuid` (signing out of an app that
 * revokes the user's refresh token must not leave the next authorization request signed in).
 */
export async function endSessionOf(ctx: Context, svc: Services, userUuid: string): Promise<void> {
  const id = ctx.cookies.get(SESSION_COOKIE);
  if (!id || id.length > 128) return;
  const digest = hashSecret(id);
  const row = await sessionsRepo.get(svc.db, digest);
  if (!row || row.user_uuid !== userUuid) return;
  await sessionsRepo.delete(svc.db, digest);
  setCookie(ctx, SESSION_COOKIE, "", {
    path: SESSION_PATH,
    sameSite: "Lax",
    secure: isHttps(svc.config.publicUrl),
    maxAgeSeconds: 0,
  });
}
