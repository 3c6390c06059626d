// Groups and sub-groups (intdash REST API: listMyGroups, listGroups, createGroup, getGroup, updateGroup,
// listSubGroup, createSubGroup, deleteGroup).
import { defineRoute } from "../../http/route.js";
import { CreateGroupRequest, Group, GroupParams, Groups, TreeQuery, UpdateGroupRequest } from "../schemas.js";
import { groupView } from "../service/views.js";
import { paging, sorting, userOf } from "./route-helpers.js";

const tag = "auth_Groups";

export const groupRoutes = [
  defineRoute({
    operationId: "listMyGroups",
    method: "GET",
    path: "/auth/users/me/groups",
    tag,
    auth: "signed-in",
    query: TreeQuery,
    success: 200,
    response: Groups,
    handler: ({ principal, query }, svc) =>
      svc.org.tree.listGroups({ uuids: [...svc.org.index.groupsOf(userOf(principal))] }, sorting(query), paging(query)),
  }),
  defineRoute({
    operationId: "listGroups",
    method: "GET",
    path: "/auth/groups",
    tag,
    query: TreeQuery,
    success: 200,
    response: Groups,
    handler: ({ query }, svc) => svc.org.tree.listGroups({}, sorting(query), paging(query)),
  }),
  defineRoute({
    operationId: "createGroup",
    method: "POST",
    path: "/auth/groups",
    tag,
    body: CreateGroupRequest,
    success: 201,
    response: Group,
    errors: [409],
    handler: ({ principal, body }, svc) => svc.org.tree.createGroup(body.name, null, principal),
  }),
  defineRoute({
    operationId: "getGroup",
    method: "GET",
    path: "/auth/groups/{group_uuid}",
    tag,
    params: GroupParams,
    success: 200,
    response: Group,
    errors: [404],
    handler: async ({ params }, svc) => groupView(await svc.org.tree.groupRow(params.group_uuid)),
  }),
  defineRoute({
    operationId: "updateGroup",
    method: "PATCH",
    path: "/auth/groups/{group_uuid}",
    tag,
    params: GroupParams,
    body: UpdateGroupRequest,
    success: 200,
    response: Group,
    errors: [404, 409],
    handler: ({ params, body }, svc) => svc.org.tree.renameGroup(params.group_uuid, body.name),
  }),
  defineRoute({
    operationId: "deleteGroup",
    method: "DELETE",
    path: "/auth/groups/{group_uuid}",
    tag,
    params: GroupParams,
    success: 204,
    errors: [404, 409],
    handler: async ({ params }, svc) => void (await svc.org.tree.deleteGroup(params.group_uuid)),
  }),
  defineRoute({
    operationId: "listSubGroup",
    method: "GET",
    path: "/auth/groups/{group_uuid}/groups",
    tag,
    params: GroupParams,
    query: TreeQuery,
    success: 200,
    response: Groups,
    errors: [404],
    handler: async ({ params, query }, svc) => {
      const g = await svc.org.tree.groupRow(params.group_uuid);
      return svc.org.tree.listGroups({ parent: g.uuid }, sorting(query), paging(query));
    },
  }),
  defineRoute({
    operationId: "createSubGroup",
    method: "POST",
    path: "/auth/groups/{group_uuid}/groups",
    tag,
    params: GroupParams,
    body: CreateGroupRequest,
    success: 201,
    response: Group,
    errors: [403, 404, 409],
    handler: ({ principal, params, body }, svc) =>
      svc.org.tree.createGroup(body.name, params.group_uuid.toLowerCase(), principal),
  }),
];
