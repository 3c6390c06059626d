// Users (admin side) and the own user (/users/me).
import { NotFound } from "../../errors.js";
import { defineRoute } from "../../http/route.js";
import { meUuid } from "../service/account-helpers.js";
import { createUser, deleteUser, listUsers, setDisabled, updateUser } from "../service/users.js";
import { CreateUserRequest, ListUsersQuery, PatchUserRequest, UserParams, UserResponse, Users } from "../schemas.js";

export const usersRoutes = [
  defineRoute({
    operationId: "listUsers",
    method: "GET",
    path: "/auth/users",
    tag: "auth_Users",
    query: ListUsersQuery,
    success: 200,
    response: Users,
    handler: ({ query }, svc) => listUsers(svc, query),
  }),
  defineRoute({
    operationId: "createUser",
    method: "POST",
    path: "/auth/users",
    tag: "auth_Users",
    body: CreateUserRequest,
    success: 201,
    response: UserResponse,
    errors: [409, 413],
    summary: "Create a user with a generated temporary password (and a confirmation mail when an e-mail is given)",
    handler: ({ body }, svc) => createUser(svc, body),
  }),
  defineRoute({
    operationId: "getUser",
    method: "GET",
    path: "/auth/users/{user_uuid}",
    tag: "auth_Users",
    params: UserParams,
    success: 200,
    response: UserResponse,
    errors: [404],
    handler: async ({ params }, svc) => {
      const u = await svc.accounts.userResource(params.user_uuid);
      if (!u) throw new NotFound("user not found");
      return u;
    },
  }),
  defineRoute({
    operationId: "updateUser",
    method: "PATCH",
    path: "/auth/users/{user_uuid}",
    tag: "auth_Users",
    params: UserParams,
    body: PatchUserRequest,
    success: 200,
    response: UserResponse,
    errors: [404, 409, 413],
    handler: ({ params, body }, svc) => updateUser(svc, params.user_uuid, body),
  }),
  defineRoute({
    operationId: "deleteUser",
    method: "DELETE",
    path: "/auth/users/{user_uuid}",
    tag: "auth_Users",
    params: UserParams,
    success: 204,
    errors: [404],
    summary: "Delete a user (refused for oneself and for the last enabled super user)",
    handler: async ({ params, principal }, svc) => {
      await deleteUser(svc, principal?.uuid, params.user_uuid);
      return undefined;
    },
  }),
  defineRoute({
    operationId: "enableUser",
    method: "PUT",
    path: "/auth/users/{user_uuid}/enable",
    tag: "auth_Users",
    params: UserParams,
    success: 200,
    response: UserResponse,
    errors: [404],
    handler: ({ params, principal }, svc) => setDisabled(svc, principal?.uuid, params.user_uuid, false),
  }),
  defineRoute({
    operationId: "disableUser",
    method: "PUT",
    path: "/auth/users/{user_uuid}/disable",
    tag: "auth_Users",
    params: UserParams,
    success: 200,
    response: UserResponse,
    errors: [404],
    summary: "Disable a user (refused for oneself and for the last enabled super user)",
    handler: ({ params, principal }, svc) => setDisabled(svc, principal?.uuid, params.user_uuid, true),
  }),
  defineRoute({
    operationId: "getMe",
    method: "GET",
    path: "/auth/users/me",
    tag: "auth_Me",
    auth: "signed-in",
    success: 200,
    response: UserResponse,
    errors: [404],
    handler: async ({ principal }, svc) => {
      const u = await svc.accounts.userResource(meUuid(principal));
      if (!u) throw new NotFound("user not found");
      return u;
    },
  }),
  defineRoute({
    operationId: "updateMe",
    method: "PATCH",
    path: "/auth/users/me",
    tag: "auth_Me",
    auth: "signed-in",
    body: PatchUserRequest,
    success: 200,
    response: UserResponse,
    errors: [409, 413],
    handler: ({ principal, body }, svc) => updateUser(svc, meUuid(principal), body),
  }),
];
