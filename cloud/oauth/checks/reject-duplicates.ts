// RFC 6749 3.1: request parameters must not be included more than once.
import { AuthorizationError, type AuthorizationRequest } from "./context.js";

export function parseQueryOnce(query: string): { params: Record<string, string>; repeated?: string } {
  const params: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(query)) {
    if (Object.hasOwn(params, k)) return { params, repeated: k };
    params[k] = v;
  }
  return { params };
}

/** Run before anything trusts client_id or redirect_uri. */
export const rejectDuplicates = (repeated: string | undefined) => (_req: AuthorizationRequest) => {
  if (repeated) throw new AuthorizationError("invalid_request", `parameter ${repeated} is repeated`);
};
