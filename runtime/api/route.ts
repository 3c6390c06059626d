// A route is data: method, path, operationId, schemas and a handler. The same schemas validate the
// request and generate the OpenAPI document, so the two cannot drift apart.
import type { Schema } from "effect";
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

export interface RouteDef<P = unknown, Q = unknown, B = unknown> {
  operationId: string;
  method: Method;
  /** OpenAPI-style path under /api/v1, e.g. `/upstreams/{id}`. */
  path: string;
  tag: string;
  summary: string;
  params?: Schema.Schema<P, any, never>;
  query?: Schema.Schema<Q, any, never>;
  body?: Schema.Schema<B, any, never>;
  success: number;
  response?: Schema.Schema<any, any, never>;
  /** Error statuses worth documenting besides 400. */
  errors?: number[];
  handler: (req: Req<P, Q, B>, api: ApiContext) => Promise<unknown> | unknown;
}

export type AnyRoute = RouteDef<any, any, any>;
export const defineRoute = <P = {}, Q = {}, B = undefined>(def: RouteDef<P, Q, B>): AnyRoute => def as AnyRoute;
