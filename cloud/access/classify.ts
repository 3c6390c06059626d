// Path classification of the access rules: which project or group (if any) a request path names.
// Only UUID-shaped segments count; the all-zero "default project" of the legacy /v1 aliases is
// open to every subject and is therefore classified as neither (decided by scopes alone).
export type Target =
  | { kind: "project"; uuid: string }
  | { kind: "group"; uuid: string }
  | { kind: "none" };

export const DEFAULT_PROJECT_UUID = "00000000-0000-0000-0000-000000000000";

const UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
const PROJECT = new RegExp(`^/(?:v1|auth|iscp)/projects/(${UUID})(?:/|$)`);
const GROUP = new RegExp(`^/auth/groups/(${UUID})(?:/|$)`);
const NONE: Target = { kind: "none" };

/** Strips `/api`, a query string and a fragment, so callers may pass either form. */
export function normalisePath(path: string): string {
  let p = path;
  const cut = p.search(/[?#]/);
  if (cut >= 0) p = p.slice(0, cut);
  if (p === "/api" || p.startsWith("/api/")) p = p.slice(4) || "/";
  if (!p.startsWith("/")) p = "/" + p;
  return p;
}

export function classify(path: string): Target {
  let m = PROJECT.exec(path);
  if (m) {
    const uuid = m[1]!.toLowerCase();
    return uuid === DEFAULT_PROJECT_UUID ? NONE : { kind: "project", uuid };
  }
  m = GROUP.exec(path);
  if (m) return { kind: "group", uuid: m[1]!.toLowerCase() };
  return NONE;
}
