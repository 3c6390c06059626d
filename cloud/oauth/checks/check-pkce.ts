// PKCE: only S256; required for public clients, accepted for confidential ones (RFC 9700 2.1.1).
import { CHALLENGE } from "../service/pkce.js";
import { AuthorizationError, type Check } from "./context.js";

export const checkPkce: Check = (req) => {
  const { code_challenge: challenge, code_challenge_method: method } = req.params;
  if (method !== undefined && method !== "S256")
    throw new AuthorizationError("invalid_request", "code_challenge_method must be S256");
  if (method !== undefined && !challenge) throw new AuthorizationError("invalid_request", "code_challenge is missing");
  if (challenge !== undefined) {
    if (method === undefined) throw new AuthorizationError("invalid_request", "code_challenge_method must be S256");
    if (!CHALLENGE.test(challenge))
      throw new AuthorizationError("invalid_request", "code_challenge must be 43 base64url characters (S256)");
  }
  if (!challenge && req.client!.tokenEndpointAuthMethod === "none")
    throw new AuthorizationError("invalid_request", "a public client must use PKCE (code_challenge with S256)");
};
