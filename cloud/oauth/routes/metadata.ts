// GET /.well-known/oauth-authorization-server (RFC 8414) and /.well-known/openid-configuration (OpenID
// Connect Discovery 1.0), so that OAuth libraries can discover the endpoints. They live outside /api (the
// issuer is the public URL), so they are fast paths (token-fast-path.ts) rather than routes.
import type { Services } from "../../services.js";
import { AUTH_METHODS } from "../schemas.js";
import { CORS } from "../service/oauth-errors.js";

export const METADATA_PATH = "/.well-known/oauth-authorization-server";
export const OPENID_PATH = "/.well-known/openid-configuration";

/** Introspection is for confidential clients only: every method but `none`. */
const CONFIDENTIAL_METHODS = AUTH_METHODS.filter((m) => m !== "none");

export function authorizationServerMetadata(svc: Services) {
  const base = svc.config.publicUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/api/auth/oauth2/authorization`,
    token_endpoint: `${base}/api/auth/oauth2/token`,
    revocation_endpoint: `${base}/api/auth/oauth2/revocation`,
    introspection_endpoint: `${base}/api/auth/oauth2/introspection`,
    jwks_uri: `${base}/api/auth/oauth2/jwks`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token", "client_credentials", "password"],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...AUTH_METHODS],
    introspection_endpoint_auth_methods_supported: [...CONFIDENTIAL_METHODS],
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
  };
}

/**
 * The same, with the fields OpenID discovery requires. Access tokens are ES256 JWTs signed with the
 * JWKS keys; no ID tokens and no userinfo endpoint are served (docs/oauth.md), so `openid` is not a scope.
 */
export function openIdConfiguration(svc: Services) {
  return {
    ...authorizationServerMetadata(svc),
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["ES256"],
    access_token_signing_alg_values_supported: ["ES256"],
    claims_supported: ["iss", "sub", "sub_kind", "client_id", "scope", "iat", "exp", "jti"],
  };
}

export const metadataHeaders = {
  "Content-Type": "application/json; charset=utf-8",
  "Cache-Control": "public, max-age=300",
  "X-Content-Type-Options": "nosniff",
  ...CORS,
};
