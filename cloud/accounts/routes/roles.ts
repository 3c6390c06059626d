// Roles and scopes (read-only catalogue) and a user's role assignments.
import { Invalid, NotFound } from "../../errors.js";
import { pageInfo, parseNameFilter } from "../../http/query.js";
import { defineRoute, reply } from "../../http/route.js";
import type { Services } from "../../services.js";
import { ROLES, ROLE_UUIDS, SCOPES, findRole, findScope } from "../service/catalogue.js";
import { meUuid, requireUser } from "../service/account-helpers.js";
import { checkAssignableRole, guardLastSuper } from "../service/users.js";
import { nowIso } from "../service/accounts-service.js";
import { roleView, scopeView } from "../service/views.js";
import {
  CatalogueQuery,
  PageQuery,
  RoleParams,
  RoleResponse,
  Roles,
  ScopeParams,
  ScopeResponse,
  Scopes,
  UserParams,
  UserRoleParams,
} from "../schemas.js";

interface CatalogueFilter {
  "uuid[]"?: readonly string[];
  "name[]"?: readonly string[];
  page: number;
  per_page: number;
}

function filterPage<T extends { uuid: string; name: string }>(all: readonly T[], q: CatalogueFilter) {
  const uuids = q["uuid[]"]?.map((u) => u.toLowerCase());
  const names = q["name[]"]?.map(parseNameFilter);
  const hits = all.filter(
    (x) =>
      (!uuids || uuids.includes(x.uuid)) &&
      (!names ||
        names.some((n) => (n.exact ? x.name === n.value : x.name.toLowerCase().includes(n.value.toLowerCase())))),
  );
  const start = (q.page - 1) * q.per_page;
  return { items: hits.slice(start, start + q.per_page), page: pageInfo(hits.length, q.page, q.per_page) };
}

const rolesPage = (svc: Services, roleUuids: readonly string[], q: { page: number; per_page: number }) => {
  const { items, page } = filterPage(
    ROLES.filter((r) => roleUuids.includes(r.uuid)),
    q,
  );
  return { items: items.map((r) => roleView(r, svc.accounts.catalogueTimes)), page };
};

export const rolesRoutes = [
  defineRoute({
    operationId: "listRoles",
    method: "GET",
    path: "/auth/roles",
    tag: "auth_Roles",
    query: CatalogueQuery,
    success: 200,
    response: Roles,
    handler: ({ query }, svc) => {
      const { items, page } = filterPage(ROLES, query);
      return { items: items.map((r) => roleView(r, svc.accounts.catalogueTimes)), page };
    },
  }),
  defineRoute({
    operationId: "getRole",
    method: "GET",
    path: "/auth/roles/{role_uuid}",
    tag: "auth_Roles",
    params: RoleParams,
    success: 200,
    response: RoleResponse,
    errors: [404],
    handler: ({ params }, svc) => {
      const r = findRole(params.role_uuid.toLowerCase());
      if (!r) throw new NotFound("role not found");
      return roleView(r, svc.accounts.catalogueTimes);
    },
  }),
  defineRoute({
    operationId: "listScopes",
    method: "GET",
    path: "/auth/scopes",
    tag: "auth_Scopes",
    query: CatalogueQuery,
    success: 200,
    response: Scopes,
    handler: ({ query }, svc) => {
      const { items, page } = filterPage(SCOPES, query);
      return { items: items.map((s) => scopeView(s, svc.accounts.catalogueTimes(s.uuid))), page };
    },
  }),
  defineRoute({
    operationId: "getScope",
    method: "GET",
    path: "/auth/scopes/{scope_uuid}",
    tag: "auth_Scopes",
    params: ScopeParams,
    success: 200,
    response: ScopeResponse,
    errors: [404],
    handler: ({ params }, svc) => {
      const s = findScope(params.scope_uuid.toLowerCase());
      if (!s) throw new NotFound("scope not found");
      return scopeView(s, svc.accounts.catalogueTimes(s.uuid));
    },
  }),
  defineRoute({
    operationId: "listUsersRoles",
    method: "GET",
    path: "/auth/users/{user_uuid}/roles",
    tag: "auth_Users",
    params: UserParams,
    query: PageQuery,
    success: 200,
    response: Roles,
    errors: [404],
    handler: async ({ params, query }, svc) => {
      await requireUser(svc, params.user_uuid);
      return rolesPage(svc, await svc.accounts.roleUuidsOf(params.user_uuid), query);
    },
  }),
  defineRoute({
    operationId: "listMyRoles",
    method: "GET",
    path: "/auth/users/me/roles",
    tag: "auth_Me",
    auth: "signed-in",
    query: PageQuery,
    success: 200,
    response: Roles,
    handler: async ({ principal, query }, svc) => {
      const uuid = meUuid(principal);
      await requireUser(svc, uuid);
      return rolesPage(svc, await svc.accounts.roleUuidsOf(uuid), query);
    },
  }),
  defineRoute({
    operationId: "assignRole",
    method: "PUT",
    path: "/auth/users/{user_uuid}/roles/{role_uuid}",
    tag: "auth_Users",
    params: UserRoleParams,
    success: 200,
    alsoSuccess: [304],
    response: RoleResponse,
    errors: [404],
    summary: "Assign a role to a user (304 when it is already assigned)",
    handler: async ({ params }, svc) => {
      await requireUser(svc, params.user_uuid);
      const role = findRole(params.role_uuid.toLowerCase());
      if (!role) throw new NotFound("role not found");
      checkAssignableRole(role.uuid, "role_uuid");
      const added = await svc.accounts.users.assignRole(params.user_uuid, role.uuid, nowIso());
      return added ? roleView(role, svc.accounts.catalogueTimes) : reply(304);
    },
  }),
  defineRoute({
    operationId: "unassignRole",
    method: "DELETE",
    path: "/auth/users/{user_uuid}/roles/{role_uuid}",
    tag: "auth_Users",
    params: UserRoleParams,
    success: 204,
    errors: [404],
    handler: async ({ params }, svc) => {
      const user = await requireUser(svc, params.user_uuid);
      const roleUuid = params.role_uuid.toLowerCase();
      if (!findRole(roleUuid)) throw new NotFound("role not found");
      const held = await svc.accounts.roleUuidsOf(user.uuid);
      if (!held.includes(roleUuid)) throw new NotFound("the user does not hold this role");
      if (roleUuid === ROLE_UUIDS.superUser) await guardLastSuper(svc, user, "remove the super-user role from");
      if (!(await svc.accounts.users.unassignRole(user.uuid, roleUuid))) throw new Invalid("role not assigned");
      return undefined;
    },
  }),
];
