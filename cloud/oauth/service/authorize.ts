// Shared by the authorization endpoint and the sign-in page: answering an authorization request with a
// code at the redirect URI (RFC 6749 4.1.2; RFC 9207 `iss`). Errors are redirected by http/error-reply.ts.
import crypto from "node:crypto";
import { reply, type Reply } from "../../http/route.js";
import type { Services } from "../../services.js";
import type { AuthorizationRequest } from "../checks/context.js";
import { grantsRepo } from "../repo/grants.js";
import { generateSecret, hashSecret } from "./secrets.js";

export const CODE_TTL_S = 60;

export function redirectTo(uri: string, params: Record<string, string | undefined>): Reply {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  return emptyReply(302, { Location: url.toString(), "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" });
}

export async function issueCode(svc: Services, req: AuthorizationRequest, userUuid: string): Promise<Reply> {
  const code = generateSecret();
  await grantsRepo.insertCode(svc.db, {
    digest: hashSecret(code),
    client_id: req.client!.clientId,
    redirect_uri: req.redirectUri!,
    code_challenge: req.params.code_challenge ?? null,
    user_uuid: userUuid,
    family_id: crypto.randomUUID(),
    expires_at: Math.floor(Date.now() / 1000) + CODE_TTL_S,
  });
  return redirectTo(req.redirectUri!, { code, state: req.params.state, iss: svc.config.publicUrl });
}

/**
 * A redirect (or an empty 200). The body is an empty text, not undefined: the shared renderer turns
 * an undefined body into Koa's `body = null`, which rewrites any status to 204.
 */
export const emptyReply = (status: number, headers: Record<string, string>): Reply =>
  reply(status, "", headers, "text/plain; charset=utf-8");
