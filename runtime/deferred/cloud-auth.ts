// Talking to the cloud peer's auth API as an edge: the OAuth 2.0 client-credentials token
// (edge_uuid as client_id) and GET /api/auth/edges/me. Used by the connection machine and by
// Verify Connection Settings.
import type { ConnectionSettings, VerificationResult } from "../settings/schemas.js";
import { errorMessage } from "../../machines/vocabulary.js";
import { incompleteConnection, TokenRejectedError, type Token } from "../../machines/connection.js";

const TIMEOUT_MS = 10_000;
const base = (c: ConnectionSettings) => c.server_url.replace(/\/+$/, "");

export async function readError(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const parts = [j.error, j.error_description, j.title, j.detail].filter((v) => typeof v === "string" && v !== "");
    if (parts.length) return [...new Set(parts)].join(": ");
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 200) || res.statusText;
}

/** Obtains an access token with the client-credentials grant. Throws an Error with a readable reason. */
export async function fetchToken(c: ConnectionSettings, signal?: AbortSignal): Promise<Token> {
  const url = `${base(c)}/api/auth/oauth2/token`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: c.edge_uuid,
        client_secret: c.client_secret,
      }),
      signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]) : AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (e) {
    throw new Error(`cannot reach ${url}: ${errorMessage((e as Error).cause ?? e)}`);
  }
  if (!res.ok) {
    const why = `token request rejected (${res.status}): ${await readError(res)}`;
    // A 4xx refuses the credentials; a 5xx, 408 or 429 is the cloud not answering just now.
    const refused = res.status < 500 && res.status !== 408 && res.status !== 429;
    throw refused ? new TokenRejectedError(why) : new Error(why);
  }
  const body = (await res.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown };
  if (typeof body.access_token !== "string" || body.access_token === "")
    throw new Error("token response has no access_token");
  return { accessToken: body.access_token, expiresIn: typeof body.expires_in === "number" ? body.expires_in : 3600 };
}

export interface EdgeIdentity {
  name: string;
  nickname: string;
}

export async function fetchEdgeMe(c: ConnectionSettings, accessToken: string): Promise<EdgeIdentity> {
  const url = `${base(c)}/api/auth/edges/me`;
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: "application/json" },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (e) {
    throw new Error(`cannot reach ${url}: ${errorMessage((e as Error).cause ?? e)}`);
  }
  if (!res.ok) throw new Error(`GET /api/auth/edges/me failed (${res.status}): ${await readError(res)}`);
  const me = (await res.json().catch(() => ({}))) as { name?: unknown; nickname?: unknown };
  return {
    name: typeof me.name === "string" ? me.name : "",
    nickname: typeof me.nickname === "string" ? me.nickname : "",
  };
}

/** Verify Connection Settings: never throws; a failure is `verified: false` with the reason in `error`. */
export async function verifyConnection(c: ConnectionSettings): Promise<VerificationResult> {
  const missing = incompleteConnection(c);
  if (missing) return { verified: false, edge_name: "", edge_nickname: "", error: missing };
  try {
    const token = await fetchToken(c);
    const me = await fetchEdgeMe(c, token.accessToken);
    return { verified: true, edge_name: me.name, edge_nickname: me.nickname, error: "" };
  } catch (e) {
    return { verified: false, edge_name: "", edge_nickname: "", error: errorMessage(e) };
  }
}
