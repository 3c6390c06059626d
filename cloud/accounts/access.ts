// The scope-based access decider installed by the accounts module: a super user may do
// everything; anyone else needs a scope allowing method + path and no scope denying it.
// The organisation area replaces it with a project/group-aware engine built on the same scopes.
import type { AccessDecider } from "../auth/principal.js";
import { resolveScopes } from "./catalogue.js";
import { scopesAllow } from "./scopes.js";

export const scopeAccess: AccessDecider = {
  allows(principal, method, path) {
    if (principal.isSuper) return true;
    return scopesAllow(resolveScopes(principal.scopes), method, path);
  },
};
