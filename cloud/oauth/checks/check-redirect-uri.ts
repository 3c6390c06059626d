// redirect_uri must equal one of the client's registered URIs, character for character
// (RFC 9700 2.1: no prefix, pattern or normalised matching). Only then may errors be redirected.
import { AuthorizationError, type Check } from "./context.js";

export const checkRedirectUri: Check = (req) => {
  const uri = req.params.redirect_uri;
  if (!uri) throw new AuthorizationError("invalid_request", "redirect_uri is missing");
  if (!req.client!.redirectUris.includes(uri))
    throw new AuthorizationError("invalid_request", "redirect_uri is not registered for this client");
  req.redirectUri = uri;
};
