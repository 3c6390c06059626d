// Every measurement operation exists twice: under /v1/projects/{project_uuid}/... and, deprecated,
// under /v1/... for the default (all-zero) project. `dual` defines both from one description.
import { Schema } from "effect";
import { defineRoute, type AnyRoute, type BodyKind, type Method, type Req } from "../../http/route.js";
import { Invalid, NotFound } from "../../errors.js";
import type { Services } from "../../services.js";
import { DEFAULT_PROJECT } from "../service/model.js";
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

/** A named project must exist (super users pass the guard for any UUID); the default project always does. */
function requireProject(svc: Services, project: string): void {
  if (project === DEFAULT_PROJECT) return;
  const projects = (svc as Partial<Services>).org?.index.projects;
  if (projects && !projects.has(project)) throw new NotFound("project not found");
}

/**
 * A measurement of a named project may name an edge of that project, or a UUID that names no edge (e.g. a user's),
 * never another project's edge. The default project takes any edge (edges in no project stream there).
 */
export function requireEdgeOfProject(svc: Services, project: string, edgeUuid: string): void {
  if (project === DEFAULT_PROJECT) return;
  const index = (svc as Partial<Services>).org?.index;
  const edge = edgeUuid.toLowerCase();
  if (index?.edges.has(edge) && !index.edgeBelongs(project, edge))
    throw new Invalid("edge_uuid names an edge outside this project", { edge_uuid: "not an edge of this project" });
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
        const project = String(req.params.project_uuid).toLowerCase();
        requireProject(svc, project);
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
