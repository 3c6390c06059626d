// Serves the web console's built files (dist/console, made by `npm run build`) under /console/, and
// sends `/` there. index.html is revalidated on every load; the hashed assets are immutable. Every
// answer carries a Content-Security-Policy that allows only the console's own scripts and styles
// (no inline script) and refuses framing; images also from the map tiles' origin when one is configured.
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { errorBodyJson } from "../../http/error-reply.js";
import { noteRoute } from "../../http/request-observer.js";
import { JSON_TYPE } from "../../http/route.js";
import type { TreeFastPath } from "../../http/pre-routing.js";
import type { Services } from "../../services.js";
import { tilesOrigin } from "../schemas.js";

export const CONSOLE_PATH = "/console/";

/** The console's security headers; `mapTilesUrl` (the operator's tile URL template) adds its origin to img-src. */
function securityHeaders(mapTilesUrl?: string): Record<string, string> {
  const tiles = mapTilesUrl ? ` ${tilesOrigin(mapTilesUrl)}` : "";
  return {
    "Content-Security-Policy":
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:${tiles}; connect-src 'self'; ` +
      "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    // The authorization code arrives in the console's URL: never send it on as a referrer.
    "Referrer-Policy": "no-referrer",
  };
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
};

/** dist/console, seen from cloud/console/routes (sources run by tests) or dist/cloud/console/routes (the build). */
export function consoleDir(): string {
  const candidates = [
    path.resolve(import.meta.dirname, "../../../console"),
    path.resolve(import.meta.dirname, "../../../dist/console"),
  ];
  return candidates.find((d) => fs.existsSync(path.join(d, "index.html"))) ?? candidates[1]!;
}

function problem(res: http.ServerResponse, headers: Record<string, string>, status: number, title: string): void {
  const { contentType, body } =
    status === 503
      ? { contentType: JSON_TYPE, body: JSON.stringify({ type: "unavailable", title }) }
      : errorBodyJson(status, title);
  res
    .writeHead(status, { ...headers, "Content-Type": contentType, "Content-Length": Buffer.byteLength(body) })
    .end(body);
}

/** Answers the request when it is the console's (true), else leaves it to the application (false). */
export function serveConsole(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  dir: string,
  headers = securityHeaders(),
): boolean {
  const url = req.url ?? "/";
  const pathname = url.split("?")[0]!;
  if (pathname !== "/" && pathname !== "/console" && !pathname.startsWith(CONSOLE_PATH)) return false;
  noteRoute(req, pathname.startsWith("/console") ? "/console/*" : "/");
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    problem(res, headers, 405, "method not allowed");
    return true;
  }
  if (pathname === "/" || pathname === "/console") {
    res.writeHead(pathname === "/" ? 302 : 301, { ...headers, Location: CONSOLE_PATH, "Content-Length": 0 }).end();
    return true;
  }
  const rel = pathname.slice(CONSOLE_PATH.length);
  // The page itself (with its ?code=&state= on the way back from signing in), or one built asset.
  const name = rel === "" || rel === "index.html" ? "index.html" : /^assets\/[\w.-]+$/.test(rel) ? rel : undefined;
  if (!name) return (void problem(res, headers, 404, "not found"), true);
  const file = path.join(dir, name);
  let body: Buffer;
  try {
    body = fs.readFileSync(file);
  } catch {
    problem(
      res,
      headers,
      name === "index.html" ? 503 : 404,
      name === "index.html" ? "the console is not built (npm run build)" : "not found",
    );
    return true;
  }
  res.writeHead(200, {
    ...headers,
    "Content-Type": TYPES[path.extname(name)] ?? "application/octet-stream",
    "Content-Length": body.length,
    "Cache-Control": name === "index.html" ? "no-cache" : "public, max-age=31536000, immutable",
  });
  res.end(req.method === "HEAD" ? undefined : body);
  return true;
}

/** The console's files, `/` and `/console`: a pre-routing fast path of the console module. */
export function consoleFastPath(): TreeFastPath {
  let dir: string | undefined;
  // The module, and so this fast path, serves every peer a process starts: the headers follow each peer's settings.
  const headers = new WeakMap<Services["config"], Record<string, string>>();
  const headersOf = (config: Services["config"]) => {
    let h = headers.get(config);
    if (!h) headers.set(config, (h = securityHeaders(config.mapTilesUrl)));
    return h;
  };
  return {
    owns: (pathname) => pathname === "/" || pathname === "/console" || pathname.startsWith(CONSOLE_PATH),
    handle: (req, res, { svc }) => void serveConsole(req, res, (dir ??= consoleDir()), headersOf(svc.config)),
  };
}
