// The scope-based access decision: a super user may do everything;
// a user may use its own account (/auth/users/me/...), as the "signed-in" routes do; anything else
// needs a scope allowing method + path and no scope denying it (deny wins).
// The access module's engine (cloud/access) is project/group-aware and built on the same scopes.
import type { AccessDecider } from "../../auth/principal.js";
import { resolveScopes } from "./catalogue.js";
import { isOwnAccountPath, scopesAllow } from "./scopes.js";

export const scopeAccess: AccessDecider = {
  allows(principal, method, path) {
    if (principal.isSuper) return true;
    if (principal.kind === "user" && isOwnAccountPath(path)) return true;
    return scopesAllow(resolveScopes(principal.scopes), method, path);
  },
};
