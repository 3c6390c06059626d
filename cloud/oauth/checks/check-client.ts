// client_id names a known client. Before the redirect URI is proven, errors show a page instead.
import { AuthorizationError, type Check } from "./context.js";

export const checkClient: Check = async (req) => {
  const id = req.params.client_id;
  if (!id) throw new AuthorizationError("invalid_request", "client_id is missing");
  const client = id.length <= 256 ? await req.svc.oauth.resolveClient(id) : undefined;
  if (!client) throw new AuthorizationError("invalid_request", "client_id names no known client");
  req.client = client;
};
