// Everything the in-memory organisation index (service/org-index.ts) is built from, read in one go at start.
import type { Queryable } from "../../database/db.js";

export interface MembershipRow {
  scope: string;
  user_uuid: string;
  role_uuids: string;
  is_owner: number;
}

type GroupLink = { uuid: string; parent_uuid: string | null };
type ProjectLink = { uuid: string; group_uuid: string };
type EdgeOwner = { uuid: string; owner_uuid: string | null };
type ProjectEdge = { project_uuid: string; edge_uuid: string };

export interface OrgSnapshot {
  groups: GroupLink[];
  projects: ProjectLink[];
  groupMembers: MembershipRow[];
  projectMembers: MembershipRow[];
  edges: EdgeOwner[];
  projectEdges: ProjectEdge[];
}

export async function readOrgSnapshot(db: Queryable): Promise<OrgSnapshot> {
  return {
    groups: await db.all<GroupLink>("SELECT uuid, parent_uuid FROM org_groups"),
    projects: await db.all<ProjectLink>("SELECT uuid, group_uuid FROM projects"),
    groupMembers: await db.all<MembershipRow>(
      "SELECT group_uuid AS scope, user_uuid, role_uuids, is_owner FROM group_members",
    ),
    projectMembers: await db.all<MembershipRow>(
      "SELECT project_uuid AS scope, user_uuid, role_uuids, is_owner FROM project_members",
    ),
    edges: await db.all<EdgeOwner>("SELECT uuid, owner_uuid FROM edges"),
    projectEdges: await db.all<ProjectEdge>("SELECT project_uuid, edge_uuid FROM project_edges"),
  };
}
