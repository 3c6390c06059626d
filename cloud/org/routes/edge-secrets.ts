// Edge client secrets (not in the public intdash API; paths chosen in the same style, see
// docs/decisions.md): several named secrets per edge, each shown whole only when created.
import { defineRoute } from "../../http/route.js";
import { ClientSecret, ClientSecrets, CreateSecretRequest, EdgeParams, SecretParams } from "../schemas.js";
import { userOf } from "./route-helpers.js";

const tag = "auth_Edges";

export const edgeSecretRoutes = [
  defineRoute({
    operationId: "createEdgeSecret",
    method: "POST",
    path: "/auth/edges/{edge_uuid}/secrets",
    tag,
    params: EdgeParams,
    body: CreateSecretRequest,
    success: 201,
    response: ClientSecret,
    errors: [404],
    handler: ({ params, body }, svc) => svc.org.edges.createSecret(params.edge_uuid, body.name),
  }),
  defineRoute({
    operationId: "listEdgeSecrets",
    method: "GET",
    path: "/auth/edges/{edge_uuid}/secrets",
    tag,
    params: EdgeParams,
    success: 200,
    response: ClientSecrets,
    errors: [404],
    handler: ({ params }, svc) => svc.org.edges.listSecrets(params.edge_uuid),
  }),
  defineRoute({
    operationId: "deleteEdgeSecret",
    method: "DELETE",
    path: "/auth/edges/{edge_uuid}/secrets/{secret_id}",
    tag,
    params: SecretParams,
    success: 204,
    errors: [404],
    handler: async ({ params }, svc) => void (await svc.org.edges.deleteSecret(params.edge_uuid, params.secret_id)),
  }),
  defineRoute({
    operationId: "createMyEdgeSecret",
    method: "POST",
    path: "/auth/users/me/edges/{edge_uuid}/secrets",
    tag,
    auth: "signed-in",
    params: EdgeParams,
    body: CreateSecretRequest,
    success: 201,
    response: ClientSecret,
    errors: [404],
    handler: ({ principal, params, body }, svc) =>
      svc.org.edges.createSecret(params.edge_uuid, body.name, userOf(principal)),
  }),
  defineRoute({
    operationId: "listMyEdgeSecrets",
    method: "GET",
    path: "/auth/users/me/edges/{edge_uuid}/secrets",
    tag,
    auth: "signed-in",
    params: EdgeParams,
    success: 200,
    response: ClientSecrets,
    errors: [404],
    handler: ({ principal, params }, svc) => svc.org.edges.listSecrets(params.edge_uuid, userOf(principal)),
  }),
  defineRoute({
    operationId: "deleteMyEdgeSecret",
    method: "DELETE",
    path: "/auth/users/me/edges/{edge_uuid}/secrets/{secret_id}",
    tag,
    auth: "signed-in",
    params: SecretParams,
    success: 204,
    errors: [404],
    handler: async ({ principal, params }, svc) =>
      void (await svc.org.edges.deleteSecret(params.edge_uuid, params.secret_id, userOf(principal))),
  }),
];
