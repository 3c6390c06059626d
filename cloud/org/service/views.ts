// API shapes of organisation resources (the intdash REST API's auth models), built from repository rows.
import type { EdgeRow, EdgeSecretRow } from "../repo/edges.js";
import type { GroupRow, ProjectRow } from "../repo/groups.js";
import type { MemberRow } from "../repo/members.js";
import type { ProjectEdgeRow } from "../repo/project-edges.js";
import type { UserCard } from "./users.js";

/** A secret appears once, whole, at creation; afterwards by name only, as OAuth2 client secrets (no part of it). */
export const secretView = (s: EdgeSecretRow, secret?: string) => ({
  id: s.id,
  name: s.name,
  secret: secret ?? "",
  last_used_at: s.last_used_at,
  created_at: s.created_at,
});

export function edgeView(e: EdgeRow, secrets: EdgeSecretRow[], clientSecret?: string) {
  return {
    uuid: e.uuid,
    name: e.name,
    nickname: e.nickname,
    description: e.description,
    ...(e.owner_uuid ? { owner: { user_uuid: e.owner_uuid } } : {}),
    ...(clientSecret ? { client_secret: clientSecret } : {}),
    secrets: secrets.map((s) => secretView(s)),
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

export const groupView = (g: GroupRow) => ({
  uuid: g.uuid,
  parent_group_uuid: g.parent_uuid,
  name: g.name,
  created_at: g.created_at,
  updated_at: g.updated_at,
});

export const projectView = (p: ProjectRow) => ({
  uuid: p.uuid,
  parent_group_uuid: p.group_uuid,
  name: p.name,
  created_at: p.created_at,
  updated_at: p.updated_at,
});

export const memberView = (m: MemberRow, card: UserCard | undefined, inherited: readonly string[]) => ({
  user_uuid: m.user_uuid,
  name: card?.name ?? "",
  emails: card?.emails ?? [],
  inherited_role_uuids: [...inherited],
  role_uuids: m.role_uuids,
  is_owner: m.is_owner,
  created_at: m.created_at,
  updated_at: m.updated_at,
});

export const projectEdgeView = (r: ProjectEdgeRow) => ({
  edge_uuid: r.edge_uuid,
  name: r.name,
  nickname: r.nickname,
  created_at: r.created_at,
  updated_at: r.updated_at,
});
