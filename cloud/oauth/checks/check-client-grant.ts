// The client must be registered for the authorization-code grant.
import { AuthorizationError, type Check } from "./context.js";

export const checkClientGrant: Check = (req) => {
  if (!req.client!.grantTypes.includes("authorization_code"))
    throw new AuthorizationError("unauthorized_client", "this client may not use the authorization_code grant");
};
