// Scope definitions and the endpoint glob matcher. Shared by the scope-based access decider
// (cloud/accounts/service/access.ts) and by the project/group-aware engine of the organisation area.
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "*";

export interface EndpointRule {
  /** Path under /api; segments `*` (exactly one segment) and `**` (zero or more segments). */
  path: string;
  method: HttpMethod;
}

export interface ScopeDef {
  uuid: string;
  /** `<resource>:<access letter>`; r = read, w = write, a = all. */
  name: string;
  description: string;
  allowed_endpoints: readonly EndpointRule[];
  denied_endpoints: readonly EndpointRule[];
  allowed_iscp_messages: readonly { type: string }[];
}

export interface RoleDef {
  uuid: string;
  name: string;
  description: string;
  scopeNames: readonly string[];
}

const compiled = new Map<string, RegExp>();

/** Compiles a path glob to an anchored regular expression (cached). */
export function globToRegExp(glob: string): RegExp {
  let re = compiled.get(glob);
  if (re) return re;
  const segs = glob.replace(/^\/+/, "").split("/");
  let src = "^";
  for (const seg of segs) {
    if (seg === "**") src += "(?:/[^/]+)*";
    else
      src +=
        "/" +
        seg
          .split("*")
          .map(escapeRegExp)
          .join("[^/]*")
          .replace(/^\[\^\/\]\*$/, "[^/]+");
  }
  src += "/?$";
  re = new RegExp(src);
  compiled.set(glob, re);
  return re;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export function pathMatches(glob: string, path: string): boolean {
  return globToRegExp(glob).test(path);
}

export function endpointMatches(rule: EndpointRule, method: string, path: string): boolean {
  return (rule.method === "*" || rule.method === method.toUpperCase()) && pathMatches(rule.path, path);
}

/** `/auth/users/me` and below: any signed-in user may call these for itself, whatever its scopes. */
export const isOwnAccountPath = (path: string) => path === "/auth/users/me" || path.startsWith("/auth/users/me/");

/** Deny wins: some scope allows the endpoint and no scope denies it. */
export function scopesAllow(scopes: readonly ScopeDef[], method: string, path: string): boolean {
  let allowed = false;
  for (const s of scopes) {
    if (s.denied_endpoints.some((r) => endpointMatches(r, method, path))) return false;
    if (!allowed && s.allowed_endpoints.some((r) => endpointMatches(r, method, path))) allowed = true;
  }
  return allowed;
}
