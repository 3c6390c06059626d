// What the areas keeping data per project (measurements, dashboards, webhooks) check of a path's project and of
// the edges a body names, against the organisation index: one rule, kept beside the index it reads.
import { Invalid, NotFound } from "../../errors.js";
import type { OrgIndex } from "./org-index.js";

/** The legacy API's default (all-zero) project: it is in no group, and takes any edge (edges in no project stream there). */
export const DEFAULT_PROJECT = "00000000-0000-0000-0000-000000000000";

/**
 * The path's project in lower case. A named project must exist (the guard lets super users through for any UUID);
 * `withDefault` says whether the area keeps data in the default project too.
 */
export function existingProject(index: OrgIndex, uuid: string, withDefault: boolean): string {
  const p = uuid.toLowerCase();
  if (!(withDefault && p === DEFAULT_PROJECT) && !index.projects.has(p)) throw new NotFound("project not found");
  return p;
}

/**
 * Edges a body names for a project (`field`): an edge of that project, or a UUID that names no edge (a measurement
 * may carry a user's), never another project's edge. The default project takes any edge.
 */
export function requireEdgesOfProject(index: OrgIndex, project: string, edges: readonly string[], field: string): void {
  if (project === DEFAULT_PROJECT) return;
  for (const edge of edges.map((e) => e.toLowerCase()))
    if (index.edges.has(edge) && !index.edgeBelongs(project, edge))
      throw new Invalid(`${field} names an edge outside this project`, { [field]: "not an edge of this project" });
}
