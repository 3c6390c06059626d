// The sign-in page (GET shows the form, POST checks it). It serves authorization requests only: its
// query is the authorization request's, re-checked on every step, and success leads back to the
// authorization endpoint with that same query, never to a URL taken from the request (no open redirect).
import * as Schema from "effect/Schema";
import type { Context } from "koa";
import { defineRoute } from "../../http/route.js";
import type { Services } from "../../services.js";
import { emptyReply } from "../service/authorize.js";
import { AuthorizationError, SignInFormRejected, type AuthorizationRequest } from "../checks/context.js";
import { checkAuthorizationRequest } from "../checks/pipeline.js";
import { clientsRepo } from "../repo/clients.js";
import { generateSecret, safeEqual } from "../service/secrets.js";
import { isHttps, setCookie } from "../signin/cookies.js";
import { htmlReply, signInPage } from "../signin/html.js";
import { clientAddress } from "../../http/client-address.js";
import { RateLimiter } from "../signin/rate-limit.js";
import { notify, onNotice } from "../../cluster/service/notices.js";
import { startSession } from "../signin/session.js";
import { SIGN_IN_PATH } from "./authorization.js";

const CSRF_COOKIE = "oauth_csrf";
const limiters = new WeakMap<object, { byAddress: RateLimiter; byName: RateLimiter }>();
/** The peer's sign-in limiters; with --nats every attempt counts on every peer. Made at start by the module. */
export const limiterOf = (svc: Pick<Services, "cluster">) => {
  let l = limiters.get(svc);
  if (!l) {
    const bus = svc.cluster.bus;
    const tell = (limiter: "byAddress" | "byName") => (key: string) => notify(bus, "signInAttempt", { limiter, key });
    const made = {
      byAddress: new RateLimiter(20, 60_000, tell("byAddress")),
      byName: new RateLimiter(10, 60_000, tell("byName")),
    };
    onNotice<{ limiter: string; key: string }>(
      bus,
      "signInAttempt",
      (p) => {
        if ((p.limiter === "byAddress" || p.limiter === "byName") && typeof p.key === "string")
          made[p.limiter].count(p.key);
      },
      () => {},
    );
    limiters.set(svc, (l = made));
  }
  return l;
};

const SignInForm = Schema.Struct({
  username: Schema.optional(Schema.String),
  password: Schema.optional(Schema.String),
  csrf: Schema.optional(Schema.String),
  action: Schema.optional(Schema.String),
});

function csrfFor(ctx: Context, svc: Services): string {
  const existing = ctx.cookies.get(CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = generateSecret();
  setCookie(ctx, CSRF_COOKIE, token, { path: SIGN_IN_PATH, sameSite: "Strict", secure: isHttps(svc.config.publicUrl) });
  return token;
}

const clientLabel = (req: AuthorizationRequest) => req.client?.clientId ?? "";

export const signInPageRoute = defineRoute({
  operationId: "showSignInPage",
  method: "GET",
  path: "/auth/oauth2/sign-in",
  tag: "auth_OAuth2",
  auth: "none",
  hidden: true,
  success: 200,
  handler: async ({ ctx }, svc) => {
    const req = await checkAuthorizationRequest(svc, ctx.querystring);
    const name = await clientName(svc, req);
    return htmlReply(
      200,
      signInPage({ action: `${SIGN_IN_PATH}?${ctx.querystring}`, csrf: csrfFor(ctx, svc), clientName: name }),
    );
  },
});

export const signInSubmitRoute = defineRoute({
  operationId: "submitSignInPage",
  method: "POST",
  path: "/auth/oauth2/sign-in",
  tag: "auth_OAuth2",
  auth: "none",
  hidden: true,
  body: SignInForm,
  bodyKind: "form",
  bodyLimit: 16 * 1024,
  success: 303,
  handler: async ({ ctx, body }, svc) => {
    const req = await checkAuthorizationRequest(svc, ctx.querystring);
    const cookie = ctx.cookies.get(CSRF_COOKIE);
    if (!cookie || !body.csrf || !safeEqual(cookie, body.csrf))
      throw new SignInFormRejected("The sign-in form expired or was not sent from this site. Go back and try again.");
    if (body.action === "cancel")
      throw new AuthorizationError("access_denied", "the user cancelled the sign-in").for(req);
    const action = `${SIGN_IN_PATH}?${ctx.querystring}`;
    const name = await clientName(svc, req);
    const again = (status: number, error: string) =>
      htmlReply(status, signInPage({ action, csrf: cookie, clientName: name, error, username: body.username ?? "" }));
    const username = (body.username ?? "").trim();
    if (!username || !body.password) return again(400, "Enter your user name and password.");
    const limits = limiterOf(svc);
    const address = clientAddress(ctx.req, svc.config.trustedProxies);
    if (!limits.byAddress.take(address) || !limits.byName.take(username.toLowerCase()))
      return again(429, "Too many sign-in attempts. Wait a minute and try again.");
    const result = await svc.oauth.accounts.signIn(username, body.password, svc.accounts.tenantUuid, address);
    if (!result.ok && result.reason === "throttled")
      return again(
        429,
        `Too many failed sign-ins. Wait ${Math.ceil(result.retryAfterMs / 1000)} seconds and try again.`,
      );
    if (!result.ok) return again(401, "Wrong user name or password.");
    await startSession(ctx, svc, result.user.uuid);
    return emptyReply(303, {
      Location: `/api/auth/oauth2/authorization?${ctx.querystring}`,
      "Cache-Control": "no-store",
    });
  },
});

/** The name shown on the page: a user-owned client's registered name, else its id. */
async function clientName(svc: Services, req: AuthorizationRequest): Promise<string> {
  const rec = req.client?.kind === "client" ? await clientsRepo.get(svc.db, req.client.clientId) : undefined;
  return rec?.name ?? clientLabel(req);
}
