// Pre-routing fast paths: a few hot or out-of-API endpoints (the token endpoint, the RFC 8414 metadata)
// answered before the Koa application sees the request, with plain node:http. A request takes a fast
// path exactly when the application's router would take it to the same method and path (router.ts:
// case, trailing slash), so a path has one answer whatever its spelling.
import type http from "node:http";
import type { Reply } from "./route.js";
import type { Services } from "../services.js";
import { createRouter } from "./router.js";
import { routerPath } from "../../lib/http/mount.js";
import { noteRoute } from "./request-observer.js";

export interface FastPathContext {
  svc: Services;
  /** The peer's error renderer (the same one the application uses), for what the handler throws. */
  renderError(err: unknown, path: string): Reply;
}

/** A fast path for one method and path, matched as the application's router matches it. */
export interface RouteFastPath {
  method: "GET" | "POST";
  /** `/api` for a route of the API; the route is reported to metrics and logs without it, as the application does. */
  prefix?: string;
  /** OpenAPI style, e.g. `/auth/oauth2/token`. */
  path: string;
  handle(req: http.IncomingMessage, res: http.ServerResponse, ctx: FastPathContext): void | Promise<void>;
}

/** A fast path for a whole tree outside the API (the console's files): every method, its own 405 and route label. */
export interface TreeFastPath {
  owns(pathname: string): boolean;
  handle(req: http.IncomingMessage, res: http.ServerResponse, ctx: FastPathContext): void | Promise<void>;
}

export type FastPath = RouteFastPath | TreeFastPath;

/** Writes a reply as JSON (the fast paths answer JSON only). */
export function sendJson(res: http.ServerResponse, r: Reply): void {
  const body = r.body === undefined ? "" : typeof r.body === "string" ? r.body : JSON.stringify(r.body);
  res.writeHead(r.status, {
    ...r.headers,
    "Content-Type": r.contentType ?? "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    "X-Content-Type-Options": "nosniff",
  });
  res.end(body);
}

/** The server's request listener: the fast path the router matches, else the application. */
export function preRouting(
  fastPaths: FastPath[],
  app: http.RequestListener,
  ctx: FastPathContext,
): http.RequestListener {
  if (fastPaths.length === 0) return app;
  const routes = fastPaths.filter((f): f is RouteFastPath => "path" in f);
  const trees = fastPaths.filter((f): f is TreeFastPath => "owns" in f);
  const router = createRouter();
  routes.forEach((f, i) =>
    router.register(routerPath(f.prefix ?? "", f.path), [f.method], async () => {}, { name: String(i) }),
  );
  return (req, res) => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const pathname = q < 0 ? url : url.slice(0, q);
    const matched = router.match(pathname, req.method ?? "GET");
    const layer = matched.route ? matched.pathAndMethod[0] : undefined;
    const route = layer?.name === undefined ? undefined : routes[Number(layer.name)];
    const fast = route ?? trees.find((t) => t.owns(pathname));
    if (!fast) return void app(req, res);
    if (route) noteRoute(req, route.path);
    const failed = (err: unknown) => {
      if (res.headersSent) res.end();
      else sendJson(res, ctx.renderError(err, pathname));
    };
    try {
      void Promise.resolve(fast.handle(req, res, ctx)).catch(failed);
    } catch (err) {
      failed(err);
    }
  };
}
