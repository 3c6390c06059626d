// One info line per answered request (msg "request"): method, route template, status, duration and who
// asked. Never the raw URL (a query string may carry a token, e.g. a verification link), headers or bodies.
import type { Logger } from "pino";
import { UNMATCHED } from "../metrics.js";
import type { ObservedRequest } from "./request-observer.js";

export function accessLog(log: Logger): (r: ObservedRequest) => void {
  return (r) => {
    if (!log.isLevelEnabled("info")) return;
    log.info(
      {
        method: r.method,
        route: r.route ?? UNMATCHED,
        status: r.status,
        ms: Math.round(r.seconds * 10_000) / 10,
        ...(r.principal ? { principal: { kind: r.principal.kind, id: r.principal.uuid } } : {}),
        ...(r.aborted ? { aborted: true } : {}),
      },
      "request",
    );
  };
}
