// GET /.well-known/oauth-authorization-server (RFC 8414), so that OAuth libraries can discover the
// endpoints. It lives outside /api (the issuer is the public URL), so the module's request listener
// serves it rather than a route.
import type { Services } from "../../services.js";
import { AUTH_METHODS } from "../schemas.js";
import { CORS } from "../service/errors.js";

export const METADATA_PATH = "/.well-known/oauth-authorization-server";

export function authorizationServerMetadata(svc: Services) {
  const base = svc.config.publicUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/api/auth/oauth2/authorization`,
    token_endpoint: `${base}/api/auth/oauth2/token`,
    revocation_endpoint: `${base}/api/auth/oauth2/revocation`,
    jwks_uri: `${base}/api/auth/oauth2/jwks`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token", "client_credentials", "password"],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...AUTH_METHODS],
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
  };
}

export const metadataHeaders = {
  "Content-Type": "application/json; charset=utf-8",
  "Cache-Control": "public, max-age=300",
  "X-Content-Type-Options": "nosniff",
  ...CORS,
};
