// Only response_type=code (no implicit or hybrid flows: RFC 9700 2.1.2).
import { AuthorizationError, type Check } from "./context.js";

export const checkResponseType: Check = (req) => {
  const rt = req.params.response_type;
  if (!rt) throw new AuthorizationError("invalid_request", "response_type is missing");
  if (rt !== "code") throw new AuthorizationError("unsupported_response_type", "only response_type=code is supported");
};
