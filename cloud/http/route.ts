// A cloud route: the kit's route definition plus who may call it (auth mode), how its body is read,
// and a handler that gets the caller's principal, the Koa context and the services.
import type { IncomingMessage } from "node:http";
import type { Context } from "koa";
import type { BodyKind } from "../../lib/http/body.js";
import type { RouteBase } from "../../lib/http/route.js";
import type { Principal } from "../auth/principal.js";
import type { Services } from "../services.js";

export { Reply, reply, type Method } from "../../lib/http/route.js";
export type { BodyKind };

/** The media type of every JSON body the cloud sends. */
export const JSON_TYPE = "application/json; charset=utf-8";

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

export interface RouteDef<P = unknown, Q = unknown, B = unknown> extends RouteBase<P, Q, B> {
  auth?: AuthMode;
  bodyKind?: BodyKind;
  /** Media types documented for the request body (defaults by bodyKind). */
  bodyMediaTypes?: string[];
  bodyLimit?: number;
  /** Reads the body instead of the kit's reader for bodyKind (the token endpoint's form reader refuses repeats). */
  readBody?: (req: IncomingMessage) => Promise<unknown>;
  /** Other success statuses the handler may answer with (e.g. 304 when nothing changed). */
  alsoSuccess?: number[];
  handler: (req: Req<P, Q, B>, svc: Services) => Promise<unknown> | unknown;
}

export type AnyRoute = RouteDef<any, any, any>;

export const defineRoute = <P = {}, Q = {}, B = undefined>(def: RouteDef<P, Q, B>): AnyRoute => def as AnyRoute;
