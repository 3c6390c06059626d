// A route is data: method, path, operationId, schemas and a handler. The same schemas validate the
// request and generate the OpenAPI document, so the two cannot drift apart.
import type { Context } from "koa";
import type { Schema } from "effect";
import type { Principal } from "../auth/principal.js";
import type { Services } from "../services.js";
import type { BodyKind } from "./body.js";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** none: public; signed-in: any authenticated caller (e.g. /users/me/...); guard: the access decider. */
export type AuthMode = "none" | "signed-in" | "guard";

export interface Req<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Present unless the route's auth mode is "none" (then it is present only if credentials were sent). */
  principal: Principal | undefined;
  ctx: Context;
}

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

export interface RouteDef<P = unknown, Q = unknown, B = unknown> {
  operationId: string;
  method: Method;
  /** OpenAPI-style path under /api, e.g. `/auth/users/{user_uuid}`. */
  path: string;
  tag: string;
  summary?: string;
  auth?: AuthMode;
  params?: Schema.Schema<P, any, never>;
  query?: Schema.Schema<Q, any, never>;
  body?: Schema.Schema<B, any, never>;
  bodyKind?: BodyKind;
  /** Media types documented for the request body (defaults by bodyKind). */
  bodyMediaTypes?: string[];
  bodyLimit?: number;
  success: number;
  /** Other success statuses the handler may answer with (e.g. 304 when nothing changed). */
  alsoSuccess?: number[];
  response?: Schema.Schema<any, any, never>;
  responseMediaType?: string;
  /** Error statuses worth documenting beyond the ones every guarded route has. */
  errors?: number[];
  /** Not listed in the OpenAPI document (the HTML sign-in page, for example). */
  hidden?: boolean;
  handler: (req: Req<P, Q, B>, svc: Services) => Promise<unknown> | unknown;
}

export type AnyRoute = RouteDef<any, any, any>;

export const defineRoute = <P = {}, Q = {}, B = undefined>(def: RouteDef<P, Q, B>): AnyRoute => def as AnyRoute;
