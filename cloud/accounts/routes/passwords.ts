// Passwords: change (own, or with a recovery token), policy check, reset to temporary, unlock,
// and the password-reset mail.
import { defineRoute, reply } from "../../http/route.js";
import { changePassword, checkMyPassword, requestRecovery, resetToTemporary, unlock } from "../service/passwords.js";
import {
  ChangePasswordRequest,
  CheckPasswordRequest,
  CheckPasswordResponse,
  PasswordRecoveryRequest,
  PasswordResponse,
  UserParams,
} from "../schemas.js";

export const passwordsRoutes = [
  defineRoute({
    operationId: "changePassword",
    method: "PUT",
    path: "/auth/users/me/password",
    tag: "auth_Me",
    auth: "none",
    body: ChangePasswordRequest,
    success: 200,
    response: PasswordResponse,
    errors: [401, 403],
    summary:
      "Change the own password with old_password (signed in) or with a recovery_token from a password-reset mail (no sign-in needed)",
    handler: ({ principal, body }, svc) => changePassword(svc, principal, body),
  }),
  defineRoute({
    operationId: "checkPassword",
    method: "POST",
    path: "/auth/users/me/password/check",
    tag: "auth_Me",
    auth: "signed-in",
    body: CheckPasswordRequest,
    success: 200,
    response: CheckPasswordResponse,
    bodyMediaTypes: ["application/json; charset=utf-8"],
    handler: ({ principal, body }, svc) => checkMyPassword(svc, principal, body.password),
  }),
  defineRoute({
    operationId: "createTemporaryPassword",
    method: "PUT",
    path: "/auth/users/{user_uuid}/password",
    tag: "auth_Users",
    params: UserParams,
    success: 200,
    response: PasswordResponse,
    errors: [404],
    summary: "Reset a user's password to a generated temporary one (returned once in temporary_password)",
    handler: ({ params }, svc) => resetToTemporary(svc, params.user_uuid),
  }),
  defineRoute({
    operationId: "unlockPassword",
    method: "PUT",
    path: "/auth/users/{user_uuid}/password/unlock",
    tag: "auth_Users",
    params: UserParams,
    success: 200,
    response: PasswordResponse,
    errors: [404],
    handler: ({ params }, svc) => unlock(svc, params.user_uuid),
  }),
  defineRoute({
    operationId: "requestPasswordRecovery",
    method: "POST",
    path: "/auth/users/password/recovery",
    tag: "auth_Users",
    auth: "none",
    body: PasswordRecoveryRequest,
    success: 204,
    summary: "Mail a single-use recovery token to a verified address (answers 204 whether or not the address is known)",
    handler: async ({ body }, svc) => {
      await requestRecovery(svc, body.address);
      return reply(204);
    },
  }),
];
