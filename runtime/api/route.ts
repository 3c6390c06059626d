// A command API route: the kit's route definition with a summary and a handler given the ApiContext.
import type { RouteBase } from "../../lib/http/route.js";
import type { MeasurementCatalog } from "../settings/measurements.js";
import type { VerificationResult } from "../settings/schemas.js";
import type { SettingsService } from "../settings/service.js";
import type { StateReader } from "../supervisor.js";

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

/** What handlers work with; the daemon builds one, tests may build their own. */
export interface ApiContext {
  settings: SettingsService;
  states: StateReader;
  measurements: MeasurementCatalog;
  verifyConnection: () => Promise<VerificationResult>;
  /** The Prometheus exposition (GET /api/v1/metrics); absent: not served. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
}

export interface Req<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

/** Paths are under /api/v1, e.g. `/upstreams/{id}`; `errors` are documented besides 400. */
export interface RouteDef<P = unknown, Q = unknown, B = unknown> extends RouteBase<P, Q, B> {
  method: Method;
  summary: string;
  handler: (req: Req<P, Q, B>, api: ApiContext) => Promise<unknown> | unknown;
}

export type AnyRoute = RouteDef<any, any, any>;
export const defineRoute = <P = {}, Q = {}, B = undefined>(def: RouteDef<P, Q, B>): AnyRoute => def as AnyRoute;
