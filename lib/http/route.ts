// What every route of both APIs has: method, path, operationId, schemas. The same schemas validate the
// request and generate the OpenAPI document, so the two cannot drift apart. Each API extends this with
// its own handler signature (and the cloud with its auth mode and body kinds).
import type * as Schema from "effect/Schema";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface RouteBase<P = unknown, Q = unknown, B = unknown> {
  operationId: string;
  method: Method;
  /** OpenAPI-style path under the API's prefix, e.g. `/upstreams/{id}`. */
  path: string;
  tag: string;
  summary?: string;
  params?: Schema.Schema<P, any, never>;
  query?: Schema.Schema<Q, any, never>;
  body?: Schema.Schema<B, any, never>;
  success: number;
  response?: Schema.Schema<any, any, never>;
  responseMediaType?: string;
  /** Error statuses worth documenting beyond the ones the API documents for every route. */
  errors?: number[];
  /** Not listed in the OpenAPI document (an HTML page, for example). */
  hidden?: boolean;
}

/** A handler's answer when the route's success status, headers or media type are not enough. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body?: unknown,
    readonly headers: Record<string, string> = {},
    readonly contentType?: string,
  ) {}
}
export const reply = (status: number, body?: unknown, headers?: Record<string, string>, contentType?: string) =>
  new Reply(status, body, headers, contentType);
