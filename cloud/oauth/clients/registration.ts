// Registration rules (spec: Registering a client; RFC 9700 2.1 and 4.1): which kinds exist, which
// auth methods each may use, and what a redirect URI may look like. Redirect URIs are later matched
// by exact string comparison only, so what is accepted here is exactly what can be redirected to.
import { Invalid } from "../../errors.js";
import type { AuthMethod } from "../repo/clients.js";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);
const FORBIDDEN_SCHEMES = new Set(["javascript:", "data:", "file:", "vbscript:", "blob:", "about:", "filesystem:"]);

/** Why a redirect URI is refused, or undefined when it is acceptable. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.includes("#")) return "must not contain a fragment";
  if (/\s/.test(uri)) return "must not contain whitespace";
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "must be an absolute URI";
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `the scheme ${url.protocol} is not allowed`;
  if (url.protocol === "http:" && !LOOPBACK.has(url.hostname))
    return "plain http is allowed only for loopback addresses (use https)";
  if ((url.protocol === "http:" || url.protocol === "https:") && url.username + url.password !== "")
    return "must not contain user information";
  // Custom schemes (com.example.app:/callback) serve native apps (RFC 8252 7.1).
  return undefined;
}

export function checkRedirectUris(uris: readonly string[]): string[] {
  const problems: Record<string, string> = {};
  uris.forEach((u, i) => {
    const p = redirectUriProblem(u);
    if (p) problems[`redirect_uris.${i}`] = p;
  });
  const [first] = Object.entries(problems);
  if (first) throw new Invalid(`invalid redirect_uris: ${first[0]}: ${first[1]}`, problems);
  return [...new Set(uris)];
}

export interface ClientShape {
  grant_types: string[];
  response_types: string[];
  redirect_uris: string[];
  token_endpoint_auth_method: AuthMethod;
  tls_client_auth_subject_dn: string;
}

/** Validates a registration and derives the stored grant and response types. */
export function clientShape(req: {
  grant_type: "authorization_code" | "client_credentials";
  token_endpoint_auth_method: AuthMethod;
  redirect_uris?: readonly string[] | undefined;
  tls_client_auth_subject_dn?: string | undefined;
}): ClientShape {
  const method = req.token_endpoint_auth_method;
  const dn = req.tls_client_auth_subject_dn ?? "";
  if (method === "tls_client_auth" && dn.trim() === "")
    throw new Invalid("tls_client_auth needs tls_client_auth_subject_dn", {
      tls_client_auth_subject_dn: "required for tls_client_auth",
    });
  if (req.grant_type === "client_credentials") {
    if (method === "none")
      throw new Invalid("a client-credentials client must authenticate", {
        token_endpoint_auth_method: "none is only for public authorization-code clients",
      });
    if (req.redirect_uris?.length)
      throw new Invalid("a client-credentials client has no redirect URIs", {
        redirect_uris: "must be empty for client_credentials",
      });
    return {
      grant_types: ["client_credentials"],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: method,
      tls_client_auth_subject_dn: dn,
    };
  }
  if (!req.redirect_uris?.length)
    throw new Invalid("an authorization-code client needs redirect_uris", {
      redirect_uris: "at least one is required",
    });
  return {
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    redirect_uris: checkRedirectUris(req.redirect_uris),
    token_endpoint_auth_method: method,
    tls_client_auth_subject_dn: dn,
  };
}
