// E-mail addresses of a user and of the own user, and their verification.
import { NotFound } from "../../errors.js";
import { defineRoute } from "../../http/route.js";
import type { Services } from "../../services.js";
import { meUuid } from "../service/account-helpers.js";
import { createEmail, deleteEmail, sendVerification, updateEmail, verifyEmail } from "../service/emails.js";
import {
  EmailParams,
  EmailRequest,
  EmailResponse,
  UserEmailParams,
  UserParams,
  VerificationResponse,
  VerifyEmailRequest,
  VerifyLinkQuery,
} from "../schemas.js";

async function verifyOwn(svc: Services, userUuid: string, emailId: number, token: string) {
  if (!(await svc.accounts.emails.byId(userUuid, emailId))) throw new NotFound("e-mail address not found");
  return verifyEmail(svc, token, { userUuid, emailId });
}

export const emailsRoutes = [
  defineRoute({
    operationId: "createEmail",
    method: "POST",
    path: "/auth/users/{user_uuid}/emails",
    tag: "auth_Users",
    params: UserParams,
    body: EmailRequest,
    success: 201,
    response: EmailResponse,
    errors: [404, 409],
    handler: ({ params, body }, svc) => createEmail(svc, params.user_uuid, body.address),
  }),
  defineRoute({
    operationId: "updateEmail",
    method: "PATCH",
    path: "/auth/users/{user_uuid}/emails/{user_email_id}",
    tag: "auth_Users",
    params: UserEmailParams,
    body: EmailRequest,
    success: 200,
    response: EmailResponse,
    errors: [404, 409],
    handler: ({ params, body }, svc) => updateEmail(svc, params.user_uuid, params.user_email_id, body.address),
  }),
  defineRoute({
    operationId: "deleteEmail",
    method: "DELETE",
    path: "/auth/users/{user_uuid}/emails/{user_email_id}",
    tag: "auth_Users",
    params: UserEmailParams,
    success: 204,
    errors: [404],
    handler: async ({ params }, svc) => {
      await deleteEmail(svc, params.user_uuid, params.user_email_id);
      return undefined;
    },
  }),
  defineRoute({
    operationId: "sendVerificationEmail",
    method: "PUT",
    path: "/auth/users/{user_uuid}/emails/{user_email_id}/verification",
    tag: "auth_Users",
    params: UserEmailParams,
    success: 200,
    response: VerificationResponse,
    errors: [404],
    handler: ({ params }, svc) => sendVerification(svc, params.user_uuid, params.user_email_id),
  }),
  defineRoute({
    operationId: "updateToVerified",
    method: "PUT",
    path: "/auth/users/{user_uuid}/emails/{user_email_id}/verified",
    tag: "auth_Users",
    params: UserEmailParams,
    body: VerifyEmailRequest,
    success: 200,
    response: EmailResponse,
    errors: [404],
    handler: ({ params, body }, svc) => verifyOwn(svc, params.user_uuid, params.user_email_id, body.verification_token),
  }),
  defineRoute({
    operationId: "createMyEmail",
    method: "POST",
    path: "/auth/users/me/emails",
    tag: "auth_Me",
    auth: "signed-in",
    body: EmailRequest,
    success: 201,
    response: EmailResponse,
    errors: [409],
    handler: ({ principal, body }, svc) => createEmail(svc, meUuid(principal), body.address),
  }),
  defineRoute({
    operationId: "updateMyEmail",
    method: "PATCH",
    path: "/auth/users/me/emails/{user_email_id}",
    tag: "auth_Me",
    auth: "signed-in",
    params: EmailParams,
    body: EmailRequest,
    success: 200,
    response: EmailResponse,
    errors: [404, 409],
    handler: ({ principal, params, body }, svc) =>
      updateEmail(svc, meUuid(principal), params.user_email_id, body.address),
  }),
  defineRoute({
    operationId: "deleteMyEmail",
    method: "DELETE",
    path: "/auth/users/me/emails/{user_email_id}",
    tag: "auth_Me",
    auth: "signed-in",
    params: EmailParams,
    success: 204,
    errors: [404],
    handler: async ({ principal, params }, svc) => {
      await deleteEmail(svc, meUuid(principal), params.user_email_id);
      return undefined;
    },
  }),
  defineRoute({
    operationId: "sendVerificationEmailToMyAddress",
    method: "PUT",
    path: "/auth/users/me/emails/{user_email_id}/verification",
    tag: "auth_Me",
    auth: "signed-in",
    params: EmailParams,
    success: 200,
    response: VerificationResponse,
    errors: [404],
    handler: ({ principal, params }, svc) => sendVerification(svc, meUuid(principal), params.user_email_id),
  }),
  defineRoute({
    operationId: "updateMyAddressToVerified",
    method: "PUT",
    path: "/auth/users/me/emails/{user_email_id}/verified",
    tag: "auth_Me",
    auth: "signed-in",
    params: EmailParams,
    body: VerifyEmailRequest,
    success: 200,
    response: EmailResponse,
    errors: [404],
    handler: ({ principal, params, body }, svc) =>
      verifyOwn(svc, meUuid(principal), params.user_email_id, body.verification_token),
  }),
  defineRoute({
    operationId: "verifyEmailByToken",
    method: "PUT",
    path: "/auth/users/emails/verified",
    tag: "auth_Users",
    auth: "none",
    body: VerifyEmailRequest,
    success: 200,
    response: EmailResponse,
    summary: "Verify an e-mail address with the token from the verification mail alone (no sign-in)",
    handler: ({ body }, svc) => verifyEmail(svc, body.verification_token),
  }),
  defineRoute({
    operationId: "verifyEmailByLink",
    method: "GET",
    path: "/auth/users/emails/verified",
    tag: "auth_Users",
    auth: "none",
    query: VerifyLinkQuery,
    success: 200,
    response: EmailResponse,
    summary: "The link in the verification mail: verifies with the token (and e-mail id) in the query",
    handler: async ({ query }, svc) => {
      if (query.email_id === undefined) return verifyEmail(svc, query.verification_token);
      const email = await svc.accounts.emails.emailById(query.email_id);
      if (!email) throw new NotFound("e-mail address not found");
      return verifyEmail(svc, query.verification_token, { userUuid: email.user_uuid, emailId: email.id });
    },
  }),
];
