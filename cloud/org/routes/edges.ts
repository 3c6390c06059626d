// Edges: plain (admin), owned by a user, own (the caller's), and the edge itself
// (intdash REST API: listEdges to updateMyEdge, the deletes and removeOwner).
import { defineRoute } from "../../http/route.js";
import { NotFound } from "../../errors.js";
import {
  AssignOwnerRequest,
  CreateEdgeRequest,
  Edge,
  EdgeOwner,
  EdgeParams,
  Edges,
  ListEdgesQuery,
  OwnEdgesQuery,
  PatchEdgeRequest,
  UserEdgeParams,
  UserParams,
} from "../schemas.js";
import { paging, sorting, userOf } from "./common.js";

const tag = "auth_Edges";

export const edgeRoutes = [
  defineRoute({
    operationId: "listEdges", method: "GET", path: "/auth/edges", tag, query: ListEdgesQuery, success: 200, response: Edges,
    handler: ({ query: q }, svc) =>
      svc.org.edges.list(
        { uuids: q["uuid[]"]?.map((u) => u.toLowerCase()), names: q["name[]"], nicknames: q["nickname[]"], ownerUuids: q["owner_uuid[]"]?.map((u) => u.toLowerCase()), hasOwner: q.has_owner },
        sorting(q), paging(q)),
  }),
  defineRoute({
    operationId: "createEdge", method: "POST", path: "/auth/edges", tag, body: CreateEdgeRequest, success: 201, response: Edge, errors: [409],
    handler: ({ body }, svc) => svc.org.edges.create(body, null),
  }),
  defineRoute({
    operationId: "getMeAsEdge", method: "GET", path: "/auth/edges/me", tag, auth: "signed-in", success: 200, response: Edge, errors: [404],
    handler: ({ principal }, svc) => {
      if (principal?.kind !== "edge") throw new NotFound("the caller is not an edge");
      return svc.org.edges.get(principal.uuid);
    },
  }),
  defineRoute({
    operationId: "getEdge", method: "GET", path: "/auth/edges/{edge_uuid}", tag, params: EdgeParams, success: 200, response: Edge, errors: [404],
    handler: ({ params }, svc) => svc.org.edges.get(params.edge_uuid),
  }),
  defineRoute({
    operationId: "updateEdge", method: "PATCH", path: "/auth/edges/{edge_uuid}", tag, params: EdgeParams, body: PatchEdgeRequest, success: 200, response: Edge, errors: [404, 409],
    handler: ({ params, body }, svc) => svc.org.edges.update(params.edge_uuid, body),
  }),
  defineRoute({
    operationId: "deleteEdge", method: "DELETE", path: "/auth/edges/{edge_uuid}", tag, params: EdgeParams, success: 204, errors: [404],
    handler: async ({ params }, svc) => void (await svc.org.edges.delete(params.edge_uuid)),
  }),
  defineRoute({
    operationId: "assignOwner", method: "POST", path: "/auth/edges/{edge_uuid}/owner", tag, params: EdgeParams, body: AssignOwnerRequest, success: 200, response: EdgeOwner, errors: [404, 409],
    handler: ({ params, body }, svc) => svc.org.edges.assignOwner(params.edge_uuid, body.user_uuid),
  }),
  defineRoute({
    operationId: "removeOwner", method: "DELETE", path: "/auth/edges/{edge_uuid}/owner", tag, params: EdgeParams, success: 204, errors: [404],
    handler: async ({ params }, svc) => void (await svc.org.edges.removeOwner(params.edge_uuid)),
  }),
  // --- a user's edges ---
  defineRoute({
    operationId: "listUsersEdges", method: "GET", path: "/auth/users/{user_uuid}/edges", tag, params: UserParams, query: OwnEdgesQuery, success: 200, response: Edges,
    handler: ({ params, query }, svc) => svc.org.edges.list({ ownerUuids: [params.user_uuid.toLowerCase()] }, sorting(query), paging(query)),
  }),
  defineRoute({
    operationId: "createUsersEdge", method: "POST", path: "/auth/users/{user_uuid}/edges", tag, params: UserParams, body: CreateEdgeRequest, success: 201, response: Edge, errors: [404, 409],
    handler: ({ params, body }, svc) => svc.org.edges.create(body, params.user_uuid.toLowerCase()),
  }),
  defineRoute({
    operationId: "getUsersEdge", method: "GET", path: "/auth/users/{user_uuid}/edges/{edge_uuid}", tag, params: UserEdgeParams, success: 200, response: Edge, errors: [404],
    handler: ({ params }, svc) => svc.org.edges.get(params.edge_uuid, params.user_uuid.toLowerCase()),
  }),
  defineRoute({
    operationId: "updateUsersEdge", method: "PATCH", path: "/auth/users/{user_uuid}/edges/{edge_uuid}", tag, params: UserEdgeParams, body: PatchEdgeRequest, success: 200, response: Edge, errors: [404, 409],
    handler: ({ params, body }, svc) => svc.org.edges.update(params.edge_uuid, body, params.user_uuid.toLowerCase()),
  }),
  defineRoute({
    operationId: "deleteUsersEdge", method: "DELETE", path: "/auth/users/{user_uuid}/edges/{edge_uuid}", tag, params: UserEdgeParams, success: 204, errors: [404],
    handler: async ({ params }, svc) => void (await svc.org.edges.delete(params.edge_uuid, params.user_uuid.toLowerCase())),
  }),
  // --- own edges ---
  defineRoute({
    operationId: "listMyEdges", method: "GET", path: "/auth/users/me/edges", tag, auth: "signed-in", query: OwnEdgesQuery, success: 200, response: Edges,
    handler: ({ principal, query }, svc) => svc.org.edges.list({ ownerUuids: [userOf(principal)] }, sorting(query), paging(query)),
  }),
  defineRoute({
    operationId: "createMyEdge", method: "POST", path: "/auth/users/me/edges", tag, auth: "signed-in", body: CreateEdgeRequest, success: 201, response: Edge, errors: [409],
    handler: ({ principal, body }, svc) => svc.org.edges.create(body, userOf(principal)),
  }),
  defineRoute({
    operationId: "createMyEdgeWithUUID", method: "PUT", path: "/auth/users/me/edges/{edge_uuid}", tag, auth: "signed-in", params: EdgeParams, body: CreateEdgeRequest, success: 201, response: Edge, errors: [409],
    handler: ({ principal, params, body }, svc) => svc.org.edges.create(body, userOf(principal), params.edge_uuid),
  }),
  defineRoute({
    operationId: "getMyEdge", method: "GET", path: "/auth/users/me/edges/{edge_uuid}", tag, auth: "signed-in", params: EdgeParams, success: 200, response: Edge, errors: [404],
    handler: ({ principal, params }, svc) => svc.org.edges.get(params.edge_uuid, userOf(principal)),
  }),
  defineRoute({
    operationId: "updateMyEdge", method: "PATCH", path: "/auth/users/me/edges/{edge_uuid}", tag, auth: "signed-in", params: EdgeParams, body: PatchEdgeRequest, success: 200, response: Edge, errors: [404, 409],
    handler: ({ principal, params, body }, svc) => svc.org.edges.update(params.edge_uuid, body, userOf(principal)),
  }),
  defineRoute({
    operationId: "deleteMyEdge", method: "DELETE", path: "/auth/users/me/edges/{edge_uuid}", tag, auth: "signed-in", params: EdgeParams, success: 204, errors: [404],
    handler: async ({ principal, params }, svc) => void (await svc.org.edges.delete(params.edge_uuid, userOf(principal))),
  }),
];

