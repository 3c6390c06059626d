// Sees every HTTP request the peer answers, whichever listener answers it (the Koa application or the
// pre-routing fast paths), once its answer is done: for the request metrics and the access log. Handlers note
// the route template and the principal on the request; the raw URL is never reported (a query string
// may hold a secret, and raw paths would make a metric series per URL).
import type http from "node:http";
import type { Principal } from "../auth/principal.js";

interface Noted {
  route?: string;
  principal?: Pick<Principal, "kind" | "uuid">;
}

const noted = new WeakMap<http.IncomingMessage, Noted>();

const factsOf = (req: http.IncomingMessage): Noted => {
  let n = noted.get(req);
  if (!n) noted.set(req, (n = {}));
  return n;
};

/** The route that took the request: its OpenAPI path template, or a fixed path outside the API. */
export function noteRoute(req: http.IncomingMessage, route: string): void {
  factsOf(req).route = route;
}

/** Who made the request, once authenticated. */
export function notePrincipal(req: http.IncomingMessage, p: Principal | undefined): void {
  if (p) factsOf(req).principal = { kind: p.kind, uuid: p.uuid };
}

export interface ObservedRequest {
  method: string;
  /** Undefined when no route took the request (404, 405). */
  route?: string;
  status: number;
  seconds: number;
  principal?: { kind: string; uuid: string };
  /** The client went away before the answer was complete. */
  aborted: boolean;
}

/** Wraps the server's request listener (fast paths and application) so that each request is reported. */
export function observeRequests(
  listener: http.RequestListener,
  done: (r: ObservedRequest) => void,
): http.RequestListener {
  return (req, res) => {
    const started = performance.now();
    res.once("close", () => {
      const n = noted.get(req);
      done({
        method: req.method ?? "",
        route: n?.route,
        status: res.statusCode,
        seconds: (performance.now() - started) / 1000,
        principal: n?.principal,
        aborted: !res.writableFinished,
      });
    });
    listener(req, res);
  };
}
