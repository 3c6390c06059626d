// API tokens of a user and of the own user, and token introspection.
import { defineRoute } from "../../http/route.js";
import { meUuid } from "../service/account-helpers.js";
import { createToken, deleteToken, introspect, listTokens, renameToken } from "../service/tokens.js";
import {
  CreateTokenRequest,
  IntrospectRequest,
  IntrospectResponse,
  PageQuery,
  TokenParams,
  TokenResponse,
  Tokens,
  UpdateTokenRequest,
  UserParams,
  UserTokenParams,
} from "../schemas.js";

const json8 = ["application/json; charset=utf-8"];

export const tokensRoutes = [
  defineRoute({
    operationId: "introspectAPIToken",
    method: "POST",
    path: "/auth/users/tokens/introspection",
    tag: "auth_Users",
    body: IntrospectRequest,
    success: 200,
    response: IntrospectResponse,
    bodyMediaTypes: json8,
    handler: ({ body }, svc) => introspect(svc, body.token),
  }),
  defineRoute({
    operationId: "listAPITokens",
    method: "GET",
    path: "/auth/users/{user_uuid}/tokens",
    tag: "auth_Users",
    params: UserParams,
    query: PageQuery,
    success: 200,
    response: Tokens,
    errors: [404],
    handler: ({ params, query }, svc) => listTokens(svc, params.user_uuid, query.page, query.per_page),
  }),
  defineRoute({
    operationId: "createAPIToken",
    method: "POST",
    path: "/auth/users/{user_uuid}/tokens",
    tag: "auth_Users",
    params: UserParams,
    body: CreateTokenRequest,
    success: 201,
    response: TokenResponse,
    errors: [404, 409],
    handler: ({ params, body }, svc) => createToken(svc, params.user_uuid, body),
  }),
  defineRoute({
    operationId: "updateAPIToken",
    method: "PATCH",
    path: "/auth/users/{user_uuid}/tokens/{user_api_token_id}",
    tag: "auth_Users",
    params: UserTokenParams,
    body: UpdateTokenRequest,
    success: 200,
    response: TokenResponse,
    errors: [404, 409],
    bodyMediaTypes: json8,
    handler: ({ params, body }, svc) => renameToken(svc, params.user_uuid, params.user_api_token_id, body.name),
  }),
  defineRoute({
    operationId: "deleteAPIToken",
    method: "DELETE",
    path: "/auth/users/{user_uuid}/tokens/{user_api_token_id}",
    tag: "auth_Users",
    params: UserTokenParams,
    success: 204,
    errors: [404],
    handler: async ({ params }, svc) => {
      await deleteToken(svc, params.user_uuid, params.user_api_token_id);
      return undefined;
    },
  }),
  defineRoute({
    operationId: "listMyAPITokens",
    method: "GET",
    path: "/auth/users/me/tokens",
    tag: "auth_Me",
    auth: "signed-in",
    query: PageQuery,
    success: 200,
    response: Tokens,
    handler: ({ principal, query }, svc) => listTokens(svc, meUuid(principal), query.page, query.per_page),
  }),
  defineRoute({
    operationId: "createMyAPIToken",
    method: "POST",
    path: "/auth/users/me/tokens",
    tag: "auth_Me",
    auth: "signed-in",
    body: CreateTokenRequest,
    success: 201,
    response: TokenResponse,
    errors: [409],
    handler: ({ principal, body }, svc) => createToken(svc, meUuid(principal), body),
  }),
  defineRoute({
    operationId: "updateMyAPIToken",
    method: "PATCH",
    path: "/auth/users/me/tokens/{user_api_token_id}",
    tag: "auth_Me",
    auth: "signed-in",
    params: TokenParams,
    body: UpdateTokenRequest,
    success: 200,
    response: TokenResponse,
    errors: [404, 409],
    bodyMediaTypes: json8,
    handler: ({ principal, params, body }, svc) =>
      renameToken(svc, meUuid(principal), params.user_api_token_id, body.name),
  }),
  defineRoute({
    operationId: "deleteMyAPIToken",
    method: "DELETE",
    path: "/auth/users/me/tokens/{user_api_token_id}",
    tag: "auth_Me",
    auth: "signed-in",
    params: TokenParams,
    success: 204,
    errors: [404],
    handler: async ({ principal, params }, svc) => {
      await deleteToken(svc, meUuid(principal), params.user_api_token_id);
      return undefined;
    },
  }),
];
