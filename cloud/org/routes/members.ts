// Group members and project members (intdash REST API: listGroupMembers, addProjectMember, ...):
// one route table per kind.
import type * as Schema from "effect/Schema";
import { defineRoute, type AnyRoute } from "../../http/route.js";
import type { Services } from "../../services.js";
import {
  AddMemberRequest,
  GroupMemberParams,
  GroupParams,
  Member,
  Members,
  MembersQuery,
  ProjectMemberParams,
  ProjectParams,
  UpdateMemberRequest,
} from "../schemas.js";
import { paging, sorting } from "./route-helpers.js";

function memberRoutes(kind: "group" | "project"): AnyRoute[] {
  const K = kind === "group" ? "Group" : "Project";
  const base = kind === "group" ? "/auth/groups/{group_uuid}/members" : "/auth/projects/{project_uuid}/members";
  const tag = `auth_${K} Members`;
  type ScopeP = { group_uuid?: string; project_uuid?: string };
  const scopeParams = (kind === "group" ? GroupParams : ProjectParams) as unknown as Schema.Schema<ScopeP, any, never>;
  const memberParams = (kind === "group" ? GroupMemberParams : ProjectMemberParams) as unknown as Schema.Schema<
    ScopeP & { user_uuid: string },
    any,
    never
  >;
  const service = (svc: Services) => (kind === "group" ? svc.org.groupMembers : svc.org.projectMembers);
  const scopeOf = (p: ScopeP) => (kind === "group" ? p.group_uuid! : p.project_uuid!).toLowerCase();
  return [
    defineRoute({
      operationId: `list${K}Members`,
      method: "GET",
      path: base,
      tag,
      params: scopeParams,
      query: MembersQuery,
      success: 200,
      response: Members,
      errors: [404],
      handler: ({ params, query }, svc) =>
        service(svc).list(
          scopeOf(params),
          { userUuids: query["user_uuid[]"], isOwner: query.is_owner },
          sorting(query, "created_at+"),
          paging(query),
        ),
    }),
    defineRoute({
      operationId: `add${K}Member`,
      method: "POST",
      path: base,
      tag,
      params: scopeParams,
      body: AddMemberRequest,
      success: 200,
      response: Member,
      errors: [404, 409],
      handler: ({ params, body }, svc) => service(svc).add(scopeOf(params), body),
    }),
    defineRoute({
      operationId: `get${K}Member`,
      method: "GET",
      path: `${base}/{user_uuid}`,
      tag,
      params: memberParams,
      success: 200,
      response: Member,
      errors: [404],
      handler: ({ params }, svc) => service(svc).get(scopeOf(params), params.user_uuid),
    }),
    defineRoute({
      operationId: `update${K}Member`,
      method: "PATCH",
      path: `${base}/{user_uuid}`,
      tag,
      params: memberParams,
      body: UpdateMemberRequest,
      success: 200,
      response: Member,
      errors: [404],
      handler: ({ params, body }, svc) => service(svc).update(scopeOf(params), params.user_uuid, body.role_uuids),
    }),
    defineRoute({
      operationId: `remove${K}Member`,
      method: "DELETE",
      path: `${base}/{user_uuid}`,
      tag,
      params: memberParams,
      success: 204,
      errors: [404],
      handler: async ({ params }, svc) => void (await service(svc).remove(scopeOf(params), params.user_uuid)),
    }),
    defineRoute({
      operationId: `add${K}OwnerAttribute`,
      method: "PUT",
      path: `${base}/{user_uuid}/owner`,
      tag,
      params: memberParams,
      success: 200,
      alsoSuccess: [304],
      response: Member,
      errors: [404],
      handler: ({ params }, svc) => service(svc).addOwner(scopeOf(params), params.user_uuid),
    }),
    defineRoute({
      operationId: `remove${K}OwnerAttribute`,
      method: "DELETE",
      path: `${base}/{user_uuid}/owner`,
      tag,
      params: memberParams,
      success: 204,
      alsoSuccess: [304],
      errors: [403, 404],
      handler: ({ params }, svc) => service(svc).removeOwner(scopeOf(params), params.user_uuid),
    }),
  ];
}

export const groupMemberRoutes = memberRoutes("group");
export const projectMemberRoutes = memberRoutes("project");
