// Every measurement operation exists twice: under /v1/projects/{project_uuid}/... and, deprecated,
// under /v1/... for the default (all-zero) project. `dual` defines both from one description.
import * as Schema from "effect/Schema";
import { defineRoute, type AnyRoute, type BodyKind, type Method, type Req } from "../../http/route.js";
import type { Services } from "../../services.js";
import { DEFAULT_PROJECT } from "../service/model.js";
import { existingProject, requireEdgesOfProject } from "../../org/service/project-checks.js";
import { Uuid } from "../schemas.js";

export const TAG = "measurements";

export interface DualRoute<F extends Schema.Struct.Fields, Q, B> {
  projectOp: string;
  /** The deprecated default-project twin; absent for v2.6 operations that only exist in project form. */
  legacyOp?: string;
  method: Method;
  /** Path after `/v1/projects/{project_uuid}` (or `/v1`). */
  path: string;
  summary?: string;
  params?: F;
  query?: Schema.Schema<Q, any, never>;
  body?: Schema.Schema<B, any, never>;
  bodyKind?: BodyKind;
  bodyMediaTypes?: string[];
  bodyLimit?: number;
  success: number;
  response?: Schema.Schema<any, any, never>;
  responseMediaType?: string;
  errors?: number[];
  handler: (req: Req<Schema.Struct.Type<F>, Q, B> & { project: string }, svc: Services) => unknown;
}

/** A measurement of a named project names an edge of that project (org's rule, cloud/org/service/project-checks.ts). */
export function requireEdgeOfProject(svc: Services, project: string, edgeUuid: string): void {
  requireEdgesOfProject(svc.org.index, project, [edgeUuid], "edge_uuid");
}

export function dual<F extends Schema.Struct.Fields = {}, Q = {}, B = undefined>(d: DualRoute<F, Q, B>): AnyRoute[] {
  const fields = (d.params ?? {}) as F;
  const { projectOp, legacyOp, handler, params: _params, path, ...common } = d;
  const routes = [
    defineRoute<any, Q, B>({
      ...common,
      operationId: projectOp,
      tag: TAG,
      path: `/v1/projects/{project_uuid}${path}`,
      params: Schema.Struct({ project_uuid: Uuid, ...fields }) as unknown as Schema.Schema<any, any, never>,
      handler: (req, svc) => {
        const project = existingProject(svc.org.index, String(req.params.project_uuid), true);
        return handler({ ...req, project }, svc);
      },
    }),
  ];
  if (legacyOp)
    routes.push(
      defineRoute<any, Q, B>({
        ...common,
        operationId: legacyOp,
        tag: TAG,
        summary: `${d.summary ?? legacyOp} (deprecated: the default project's ${projectOp})`,
        path: `/v1${path}`,
        params: Schema.Struct(fields) as unknown as Schema.Schema<any, any, never>,
        handler: (req, svc) => handler({ ...req, project: DEFAULT_PROJECT }, svc),
      }),
    );
  return routes;
}
