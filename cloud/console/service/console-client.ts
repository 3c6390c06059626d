// The console's OAuth 2.0 client: public (PKCE, no secret), client_id `console`, registered at every
// start if missing (so databases made before the console get it too). Its redirect URI follows the
// peer's public URL, which may only be known once the server listens (port 0), so the resolver
// computes it at each use; the stored row says the same for anyone listing clients.
import type { Services } from "../../services.js";
import type { ClientResolver } from "../../oauth/clients/model.js";
import { ensureFixedClient } from "../../oauth/service/fixed-clients.js";
import { CONSOLE_PATH } from "../routes/static-files.js";

export const CONSOLE_CLIENT_ID = "console";

export const consoleRedirectUri = (svc: Pick<Services, "config">) => `${svc.config.publicUrl}${CONSOLE_PATH}`;

const nowIso = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

/** Inserts the client when missing, and keeps its stored redirect URI in step with the public URL. */
export async function registerConsoleClient(svc: Pick<Services, "config" | "db" | "oauth">): Promise<void> {
  const at = nowIso();
  const uri = consoleRedirectUri(svc);
  await ensureFixedClient(svc.db, {
    client_id: CONSOLE_CLIENT_ID,
    name: "Console",
    grant_types: ["authorization_code", "refresh_token"],
    token_endpoint_auth_method: "none",
    redirect_uris: [uri],
    response_types: ["code"],
    // No cap: the console acts with exactly the signed-in user's scopes.
    scopes: [],
    audiences: [],
    tls_client_auth_subject_dn: "",
    user_uuid: null,
    created_at: at,
    updated_at: at,
  });
  svc.oauth.ownClients.invalidate(CONSOLE_CLIENT_ID);
}

/** Resolves `console` (a client resolver, asked before the user-owned clients): the stored client with today's redirect URI and no scope cap. */
export function consoleClientResolver(svc: Services): ClientResolver {
  return async (clientId) => {
    if (clientId !== CONSOLE_CLIENT_ID) return undefined;
    const stored = await svc.oauth.ownClients.resolve(clientId);
    if (!stored) return undefined;
    return { ...stored, redirectUris: [consoleRedirectUri(svc)], scopeCap: undefined };
  };
}
