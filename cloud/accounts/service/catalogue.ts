// The built-in, read-only catalogue of scopes and roles (documented in docs/roles-and-scopes.md).
// UUIDs are fixed forever: clients, group/project memberships and tokens refer to them.
import type { EndpointRule, HttpMethod, RoleDef, ScopeDef } from "./scopes.js";

const WRITE: HttpMethod[] = ["POST", "PUT", "PATCH", "DELETE"];
const rules = (methods: HttpMethod[], ...paths: string[]): EndpointRule[] =>
  methods.flatMap((method) => paths.map((path) => ({ path, method })));
const iscp = (...types: string[]) => types.map((type) => ({ type }));

/** iSCP message types a scope may allow (see docs/roles-and-scopes.md). */
export const ISCP_MESSAGE_TYPES = ["upstream", "downstream", "upstream_call", "downstream_call"] as const;

export const SCOPES: readonly ScopeDef[] = [
  {
    uuid: "e62ac53e-7666-4e2a-919a-fc2021ef07f8",
    name: "all:a",
    description: "Every endpoint and every iSCP message (super users).",
    allowed_endpoints: rules(["*"], "/**"),
    denied_endpoints: [],
    allowed_iscp_messages: iscp(...ISCP_MESSAGE_TYPES),
  },
  {
    uuid: "a70a1c48-d0e8-4583-9e47-8c20817aabc1",
    name: "all:r",
    description: "Read every resource, except other users' API tokens.",
    allowed_endpoints: rules(["GET"], "/**"),
    denied_endpoints: rules(["GET"], "/auth/users/*/tokens", "/auth/users/*/tokens/**"),
    allowed_iscp_messages: iscp("downstream"),
  },
  {
    uuid: "34c04828-0ae6-4d24-9dd6-ea52ec4eb338",
    name: "me:a",
    description: "The caller's own account: profile, e-mails, password, API tokens, clients, edges, access checks.",
    allowed_endpoints: rules(["*"], "/auth/users/me", "/auth/users/me/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "4ebb1409-6033-47a9-a618-4814554eeb71",
    name: "users:r",
    description:
      "Read users, their e-mails and roles (not their API tokens; their OAuth2 clients are clients:r's, their edges edges:r's).",
    allowed_endpoints: rules(["GET"], "/auth/users", "/auth/users/**"),
    denied_endpoints: rules(
      ["GET"],
      "/auth/users/*/tokens",
      "/auth/users/*/tokens/**",
      "/auth/users/*/clients",
      "/auth/users/*/clients/**",
      "/auth/users/*/edges",
      "/auth/users/*/edges/**",
    ),
    allowed_iscp_messages: [],
  },
  {
    uuid: "80e3aec9-6461-442f-b1b2-f2a5e6530f19",
    name: "users:w",
    description: "Create, change and delete users, their e-mails, passwords, roles and API tokens.",
    allowed_endpoints: rules(WRITE, "/auth/users", "/auth/users/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "8ea25b28-d114-4413-85dd-8eb1ab6094f3",
    name: "roles:r",
    description: "Read the role and scope catalogue.",
    allowed_endpoints: rules(["GET"], "/auth/roles", "/auth/roles/**", "/auth/scopes", "/auth/scopes/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "1b0aeb93-b3d5-45a7-b142-6876993d1644",
    name: "edges:r",
    description: "Read edges (also a user's, under /auth/users) and their secrets' names, never a secret.",
    allowed_endpoints: rules(["GET"], "/auth/edges", "/auth/edges/**", "/auth/users/*/edges", "/auth/users/*/edges/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "2c47f45c-435c-4b63-98cb-8d2d3b0f2ff7",
    name: "edges:w",
    description: "Create, change and delete edges and their owners.",
    allowed_endpoints: rules(WRITE, "/auth/edges", "/auth/edges/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "956a98c0-d829-44bb-b6cd-a1ae7671c9d8",
    name: "clients:r",
    description: "Read OAuth2 clients (also a user's, under /auth/users).",
    allowed_endpoints: rules(
      ["GET"],
      "/auth/clients",
      "/auth/clients/**",
      "/auth/users/*/clients",
      "/auth/users/*/clients/**",
    ),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "24e8fe87-4420-40ca-ba7a-d6a0160a721a",
    name: "clients:w",
    description: "Change and delete OAuth2 clients.",
    allowed_endpoints: rules(WRITE, "/auth/clients", "/auth/clients/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "5cc50267-77a7-4878-9326-d6a653a557f6",
    name: "groups:r",
    description: "Read groups, sub-groups, their members and projects.",
    allowed_endpoints: rules(["GET"], "/auth/groups", "/auth/groups/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "16e45ac2-b78d-42f1-a220-c0d8aa88fc80",
    name: "groups:w",
    description: "Create, change and delete groups, sub-groups and group members.",
    allowed_endpoints: rules(WRITE, "/auth/groups", "/auth/groups/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "d98d9e56-faf4-4ced-8e48-0de3c741d2a5",
    name: "projects:r",
    description: "Read projects, their members and edges.",
    allowed_endpoints: rules(["GET"], "/auth/projects", "/auth/projects/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "0bee58bc-8bd4-47a8-ab96-c02d51bed126",
    name: "projects:w",
    description: "Change and delete projects, their members and edges.",
    allowed_endpoints: rules(WRITE, "/auth/projects", "/auth/projects/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "b9c7905d-cf83-4746-b648-b2a5fa5bf999",
    name: "measurements:r",
    description: "Read measurements, data points and media.",
    allowed_endpoints: rules(["GET"], "/v1/**", "/media/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "f4afaf2e-ed09-478a-acd1-0c64746f5ac8",
    name: "measurements:w",
    description: "Create, change and delete measurements, data points and media.",
    allowed_endpoints: rules(WRITE, "/v1/**", "/media/**"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "60440dbd-4b8b-4267-b7f0-fc2c3b1dbec3",
    name: "iscp:r",
    description: "Connect to the iSCP broker and receive streams (downstream).",
    allowed_endpoints: [
      ...rules(
        ["GET"],
        "/iscp/connect",
        "/v1/edge_connections",
        "/v1/edge_connections/**",
        "/v1/projects/*/edge_connections/**",
      ),
      ...rules(["POST"], "/iscp/tickets"),
    ],
    denied_endpoints: [],
    allowed_iscp_messages: iscp("downstream", "downstream_call"),
  },
  {
    uuid: "8719f9e7-45f8-43d8-9ad8-85bed593a311",
    name: "iscp:w",
    description: "Send streams to the iSCP broker (upstream), over WebSocket, QUIC or REST.",
    allowed_endpoints: [
      ...rules(["GET"], "/iscp/connect"),
      ...rules(["POST", "PUT"], "/iscp/tickets", "/iscp/projects/*/**"),
    ],
    denied_endpoints: [],
    allowed_iscp_messages: iscp("upstream", "upstream_call"),
  },
  {
    uuid: "3866bbdc-d0f6-40f5-a088-395bc579e84c",
    name: "authorization:r",
    description: "Ask access decisions for other subjects and introspect API tokens (resource servers).",
    allowed_endpoints: rules(["POST"], "/auth/authorize/http", "/auth/users/tokens/introspection"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "8ed8578a-cae8-4dc0-a977-a7ec13de2c2b",
    name: "edge-self:r",
    description: "An edge reads its own record.",
    allowed_endpoints: rules(["GET"], "/auth/edges/me"),
    denied_endpoints: [],
    allowed_iscp_messages: [],
  },
  {
    uuid: "787da876-3fda-428d-bd65-9d4eabc2f6ed",
    name: "owner:a",
    description: "Everything inside one group or project (held through ownership, evaluated per group/project).",
    allowed_endpoints: rules(
      ["*"],
      "/auth/groups/*",
      "/auth/groups/*/**",
      "/auth/projects/*",
      "/auth/projects/*/**",
      "/v1/projects/*/**",
      "/iscp/projects/*/**",
      "/projects/*/**",
    ),
    denied_endpoints: [],
    allowed_iscp_messages: iscp(...ISCP_MESSAGE_TYPES),
  },
];

export const ROLE_UUIDS = {
  superUser: "afb7f751-cf2c-4ce6-a9b4-c5820217df87",
  member: "751d7649-7fff-45ab-aecd-9c890f22061c",
  readOnly: "09a57d93-7cb0-4a2d-bc5e-74b0eb04997b",
  edge: "664acb73-8da8-4250-b3fd-498a7b8f1a3d",
  owner: "bd8058f4-a370-49a4-9e8a-8326a07872b7",
} as const;

export const ROLES: readonly RoleDef[] = [
  {
    uuid: ROLE_UUIDS.superUser,
    name: "super-user",
    description: "May do everything; holders are `is_super`.",
    scopeNames: ["all:a"],
  },
  {
    uuid: ROLE_UUIDS.member,
    name: "member",
    description:
      "An ordinary user: own account and own edges, read the directory, read and write measurements and streams.",
    scopeNames: [
      "me:a",
      "users:r",
      "roles:r",
      "edges:r",
      "groups:r",
      "projects:r",
      "measurements:r",
      "measurements:w",
      "iscp:r",
      "iscp:w",
    ],
  },
  {
    uuid: ROLE_UUIDS.readOnly,
    name: "read-only",
    description: "Reads everything it can see (not others' API tokens), changes only its own account.",
    scopeNames: ["me:a", "all:r", "iscp:r"],
  },
  {
    uuid: ROLE_UUIDS.edge,
    name: "edge",
    description: "A device: reads itself, writes measurements, sends and receives streams.",
    scopeNames: ["edge-self:r", "measurements:r", "measurements:w", "iscp:r", "iscp:w"],
  },
  {
    uuid: ROLE_UUIDS.owner,
    name: "owner",
    description: "Owner of a group or project: everything inside it. Held through the owner attribute, not assigned.",
    scopeNames: ["me:a", "owner:a"],
  },
];

const scopeByName = new Map(SCOPES.map((s) => [s.name, s]));
const scopeByUuid = new Map(SCOPES.map((s) => [s.uuid, s]));
const roleByUuid = new Map(ROLES.map((r) => [r.uuid, r]));

/** Scope definitions for scope names; unknown names are skipped. */
export function resolveScopes(names: readonly string[]): ScopeDef[] {
  return names.flatMap((n) => scopeByName.get(n) ?? []);
}
export const findScope = (uuid: string) => scopeByUuid.get(uuid);
export const findRole = (uuid: string) => roleByUuid.get(uuid);

/** Scope names held through the given roles, without duplicates, in catalogue order. */
export function scopeNamesOfRoles(roleUuids: readonly string[]): string[] {
  const names = new Set(roleUuids.flatMap((u) => roleByUuid.get(u)?.scopeNames ?? []));
  return SCOPES.filter((s) => names.has(s.name)).map((s) => s.name);
}
