// Routes of the OAuth2 client operations (intdash REST API: listOAuth2Clients to updateMyOAuth2Client,
// and the deletes) and of client secrets, whose paths the real API lacks (see docs/decisions.md).
import type { Principal } from "../../auth/principal.js";
import { Forbidden, Unauthenticated } from "../../errors.js";
import { defineRoute } from "../../http/route.js";
import { ClientSecret as ClientSecretSchema } from "../schemas.js";
import { createClient, createSecret, deleteClient, deleteSecret, getClient, listClients, updateClient } from "../clients/ops.js";
import {
  ClientParams,
  ClientSecretParams,
  CreateClientRequest,
  CreateSecretRequest,
  ListClientsQuery,
  OAuth2Client,
  OAuth2Clients,
  OAuth2ClientWithSecret,
  PageQuery,
  UpdateClientRequest,
  UserClientParams,
} from "../schemas.js";

const tag = "auth_Clients";

function me(principal: Principal | undefined): string {
  if (!principal) throw new Unauthenticated();
  if (principal.kind !== "user") throw new Forbidden("only users own OAuth2 clients");
  return principal.uuid;
}

export const clientRoutes = [
  defineRoute({
    operationId: "listOAuth2Clients", method: "GET", path: "/auth/clients", tag, query: ListClientsQuery, success: 200, response: OAuth2Clients,
    handler: ({ query }, svc) =>
      listClients(svc, { ids: query["id[]"], names: query["name[]"], sort: query.sort, page: query.page, perPage: query.per_page }),
  }),
  defineRoute({
    operationId: "getOAuth2Client", method: "GET", path: "/auth/clients/{client_id}", tag, params: ClientParams, success: 200, response: OAuth2Client, errors: [404],
    handler: ({ params }, svc) => getClient(svc, params.client_id),
  }),
  defineRoute({
    operationId: "updateOAuth2Client", method: "PATCH", path: "/auth/clients/{client_id}", tag, params: ClientParams, body: UpdateClientRequest, success: 200, response: OAuth2Client, errors: [404],
    handler: ({ params, body }, svc) => updateClient(svc, params.client_id, body),
  }),
  defineRoute({
    operationId: "deleteOAuth2Client", method: "DELETE", path: "/auth/clients/{client_id}", tag, params: ClientParams, success: 204, errors: [404],
    handler: ({ params }, svc) => deleteClient(svc, params.client_id),
  }),
  defineRoute({
    operationId: "createOAuth2ClientSecret", method: "POST", path: "/auth/clients/{client_id}/secrets", tag, params: ClientParams, body: CreateSecretRequest, success: 201, response: ClientSecretSchema, errors: [404],
    handler: ({ params, body }, svc) => createSecret(svc, params.client_id, body.name),
  }),
  defineRoute({
    operationId: "deleteOAuth2ClientSecret", method: "DELETE", path: "/auth/clients/{client_id}/secrets/{secret_id}", tag, params: ClientSecretParams, success: 204, errors: [404],
    handler: ({ params }, svc) => deleteSecret(svc, params.client_id, params.secret_id),
  }),
  defineRoute({
    operationId: "listUsersOAuth2Clients", method: "GET", path: "/auth/users/{user_uuid}/clients", tag, params: UserClientParams, query: PageQuery, success: 200, response: OAuth2Clients,
    handler: ({ params, query }, svc) => listClients(svc, { userUuid: params.user_uuid.toLowerCase(), page: query.page, perPage: query.per_page }),
  }),
  defineRoute({
    operationId: "listMyOAuth2Clients", method: "GET", path: "/auth/users/me/clients", tag, auth: "signed-in", query: PageQuery, success: 200, response: OAuth2Clients,
    handler: ({ principal, query }, svc) => listClients(svc, { userUuid: me(principal), page: query.page, perPage: query.per_page }),
  }),
  defineRoute({
    operationId: "createMyOAuth2Clients", method: "POST", path: "/auth/users/me/clients", tag, auth: "signed-in", body: CreateClientRequest, success: 201, response: OAuth2ClientWithSecret,
    handler: ({ principal, body }, svc) => createClient(svc, me(principal), body),
  }),
  defineRoute({
    operationId: "getMyOAuth2Client", method: "GET", path: "/auth/users/me/clients/{client_id}", tag, auth: "signed-in", params: ClientParams, success: 200, response: OAuth2Client, errors: [404],
    handler: ({ principal, params }, svc) => getClient(svc, params.client_id, me(principal)),
  }),
  defineRoute({
    operationId: "updateMyOAuth2Client", method: "PATCH", path: "/auth/users/me/clients/{client_id}", tag, auth: "signed-in", params: ClientParams, body: UpdateClientRequest, success: 200, response: OAuth2Client, errors: [404],
    handler: ({ principal, params, body }, svc) => updateClient(svc, params.client_id, body, me(principal)),
  }),
  defineRoute({
    operationId: "deleteMyOAuth2Client", method: "DELETE", path: "/auth/users/me/clients/{client_id}", tag, auth: "signed-in", params: ClientParams, success: 204, errors: [404],
    handler: ({ principal, params }, svc) => deleteClient(svc, params.client_id, me(principal)),
  }),
  defineRoute({
    operationId: "createMyOAuth2ClientSecret", method: "POST", path: "/auth/users/me/clients/{client_id}/secrets", tag, auth: "signed-in", params: ClientParams, body: CreateSecretRequest, success: 201, response: ClientSecretSchema, errors: [404],
    handler: ({ principal, params, body }, svc) => createSecret(svc, params.client_id, body.name, me(principal)),
  }),
  defineRoute({
    operationId: "deleteMyOAuth2ClientSecret", method: "DELETE", path: "/auth/users/me/clients/{client_id}/secrets/{secret_id}", tag, auth: "signed-in", params: ClientSecretParams, success: 204, errors: [404],
    handler: ({ principal, params }, svc) => deleteSecret(svc, params.client_id, params.secret_id, me(principal)),
  }),
];
