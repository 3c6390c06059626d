// Check access and Check own access (intdash REST API: checkHTTPAuthorization, checkMeHTTPAuthorization):
// both ask the same engine as the route guard. Paths may be given with or without the `/api` prefix.
import { defineRoute } from "../../http/route.js";
import {
  CheckAuthorizationResponse,
  CheckHTTPAuthorizationRequest,
  CheckMeHTTPAuthorizationRequest,
} from "../schemas.js";
import type { Services } from "../../services.js";
import type { Subject } from "../service/engine.js";

const tag = "auth_Authorization";

/** A subject UUID is an edge when the index knows it as one, else a user. */
async function resolveSubject(svc: Services, subject: string | undefined): Promise<Subject | undefined> {
  if (subject === undefined || subject === "") return undefined;
  const uuid = subject.toLowerCase();
  if (svc.org.index.edges.has(uuid)) return { kind: "edge", uuid };
  return { kind: "user", uuid, isSuper: await svc.org.users.isSuper(uuid) };
}

export const accessRoutes = [
  defineRoute({
    operationId: "checkHTTPAuthorization",
    method: "POST",
    path: "/auth/authorize/http",
    tag,
    body: CheckHTTPAuthorizationRequest,
    success: 200,
    response: CheckAuthorizationResponse,
    handler: async ({ body }, svc) => ({
      result: svc.org.decide({
        subject: await resolveSubject(svc, body.subject),
        scopes: body.scopes,
        method: body.method,
        path: body.path,
      }),
    }),
  }),
  defineRoute({
    operationId: "checkMeHTTPAuthorization",
    method: "POST",
    path: "/auth/users/me/authorize/http",
    tag,
    auth: "signed-in",
    body: CheckMeHTTPAuthorizationRequest,
    success: 200,
    response: CheckAuthorizationResponse,
    handler: ({ principal, body }, svc) => ({
      result: svc.org.decide({ subject: principal, scopes: principal!.scopes, method: body.method, path: body.path }),
    }),
  }),
];
