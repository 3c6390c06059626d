// Path classification of the access rules: which project or group (if any) a request path names.
// Only UUID-shaped segments count; the all-zero "default project" of the legacy /v1 aliases is
// open to every subject and is therefore classified as neither (decided by scopes alone).
export type Target = { kind: "project"; uuid: string } | { kind: "group"; uuid: string } | { kind: "none" };

export const DEFAULT_PROJECT_UUID = "00000000-0000-0000-0000-000000000000";

const UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
// `/projects/{uuid}/...` without a prefix: the intdash webhook API's project operations.
const PROJECT = new RegExp(`^/(?:(?:v1|auth|iscp)/)?projects/(${UUID})(?:/|$)`);
const GROUP = new RegExp(`^/auth/groups/(${UUID})(?:/|$)`);
const NONE: Target = { kind: "none" };

/** True when `normalisePath` could change the path (the engine's fast path skips it otherwise). */
export const needsNormalising = (p: string) =>
  p.charCodeAt(0) !== 47 ||
  p.startsWith("/api") ||
  p.includes("?") ||
  p.includes("#") ||
  p.includes("%") ||
  p.includes("/.");

/**
 * Strips `/api`, a query string and a fragment, so callers may pass either form. Then the RFC 3986
 * §6.2.2 normalisations: escapes of unreserved characters are decoded (the router decodes them in
 * path parameters, so `/projects/%34e…` names project `4e…`) and `.`/`..` segments are removed.
 */
export function normalisePath(path: string): string {
  let p = path;
  const cut = p.search(/[?#]/);
  if (cut >= 0) p = p.slice(0, cut);
  if (p.includes("%")) p = p.replace(/%([0-9a-fA-F]{2})/g, decodeUnreserved);
  if (!p.startsWith("/")) p = "/" + p;
  if (p.includes("/.")) p = removeDotSegments(p);
  if (p === "/api" || p.startsWith("/api/")) p = p.slice(4) || "/";
  return p;
}

function decodeUnreserved(escaped: string, hex: string): string {
  const c = String.fromCharCode(parseInt(hex, 16));
  return /[A-Za-z0-9\-._~]/.test(c) ? c : escaped;
}

function removeDotSegments(p: string): string {
  const out: string[] = [];
  const segs = p.split("/");
  for (let i = 1; i < segs.length; i++) {
    const s = segs[i]!;
    if (s === "..") out.pop();
    else if (s !== ".") out.push(s);
  }
  const last = segs[segs.length - 1];
  return "/" + out.join("/") + (last === "." || last === ".." ? (out.length ? "/" : "") : "");
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
