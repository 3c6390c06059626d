// Request and response schemas of the organisation routes, with the spec's limits.
import * as Schema from "effect/Schema";
import { BoolFromQuery, DateTimeFromQuery, PageFields, StringArrayQuery, listOf, sortQuery } from "../http/query.js";
import { Uuid } from "../accounts/schemas.js";

export { Uuid };
const bounded = (min: number, max: number) => Schema.String.pipe(Schema.minLength(min), Schema.maxLength(max));

// --- path parameters ---
export const EdgeParams = Schema.Struct({ edge_uuid: Uuid });
export const UserParams = Schema.Struct({ user_uuid: Uuid });
export const UserEdgeParams = Schema.Struct({ user_uuid: Uuid, edge_uuid: Uuid });
export const SecretParams = Schema.Struct({
  edge_uuid: Uuid,
  secret_id: Schema.NumberFromString.pipe(Schema.int(), Schema.positive()),
});
export const GroupParams = Schema.Struct({ group_uuid: Uuid });
export const GroupMemberParams = Schema.Struct({ group_uuid: Uuid, user_uuid: Uuid });
export const ProjectParams = Schema.Struct({ project_uuid: Uuid });
export const ProjectMemberParams = Schema.Struct({ project_uuid: Uuid, user_uuid: Uuid });
export const ProjectEdgeParams = Schema.Struct({ project_uuid: Uuid, edge_uuid: Uuid });

// --- queries ---
const UuidArrayQuery = Schema.optional(Schema.Array(Uuid));
const TREE_SORT = ["created_at", "updated_at", "name"] as const;
export const EDGE_SORT = ["name", "nickname", "created_at", "updated_at"] as const;
export const ListEdgesQuery = Schema.Struct({
  "uuid[]": UuidArrayQuery,
  "name[]": StringArrayQuery,
  "nickname[]": StringArrayQuery,
  "owner_uuid[]": UuidArrayQuery,
  has_owner: Schema.optional(BoolFromQuery),
  sort: sortQuery(EDGE_SORT),
  ...PageFields,
});
export const OwnEdgesQuery = Schema.Struct({ sort: sortQuery(EDGE_SORT), ...PageFields });
export const TreeQuery = Schema.Struct({ sort: sortQuery(TREE_SORT), ...PageFields });
export const ListProjectsQuery = Schema.Struct({
  since_created_at: Schema.optional(DateTimeFromQuery),
  sort: sortQuery(TREE_SORT),
  ...PageFields,
});
export const MembersQuery = Schema.Struct({
  "user_uuid[]": UuidArrayQuery,
  is_owner: Schema.optional(BoolFromQuery),
  sort: sortQuery(TREE_SORT),
  ...PageFields,
});
export const ProjectEdgesQuery = Schema.Struct({
  "edge_uuid[]": UuidArrayQuery,
  sort: sortQuery(["created_at", "updated_at", "nickname"] as const),
  ...PageFields,
});

// --- request bodies ---
const EdgeName = bounded(1, 255).pipe(
  Schema.pattern(/^[0-9a-zA-Z\-_]*$/, { message: () => "only letters, digits, - and _" }),
);
const EdgeNickname = Schema.String.pipe(Schema.maxLength(511));
const EdgeDescription = Schema.String.pipe(Schema.maxLength(65535));
export const CreateEdgeRequest = Schema.Struct({
  name: EdgeName,
  nickname: Schema.optional(EdgeNickname),
  description: Schema.optional(EdgeDescription),
});
export const PatchEdgeRequest = Schema.Struct({
  name: Schema.optional(EdgeName),
  nickname: Schema.optional(EdgeNickname),
  description: Schema.optional(EdgeDescription),
});
export const AssignOwnerRequest = Schema.Struct({ user_uuid: Uuid });
export const CreateSecretRequest = Schema.Struct({ name: bounded(1, 511) });
const GroupName = bounded(1, 255);
export const CreateGroupRequest = Schema.Struct({ name: GroupName });
export const UpdateGroupRequest = Schema.Struct({ name: Schema.optional(GroupName) });
export const CreateProjectRequest = Schema.Struct({ name: GroupName });
export const UpdateProjectRequest = Schema.Struct({ name: GroupName });
const RoleUuids = Schema.Array(bounded(1, 36)).pipe(Schema.maxItems(64));
export const AddMemberRequest = Schema.Struct({
  user_uuid: Schema.optional(bounded(1, 36)),
  user_email_address: Schema.optional(bounded(1, 512)),
  role_uuids: RoleUuids,
});
export const UpdateMemberRequest = Schema.Struct({ role_uuids: Schema.optional(RoleUuids) });
export const AddProjectEdgeRequest = Schema.Struct({ edge_name: EdgeName, nickname: Schema.optional(EdgeNickname) });
export const UpdateProjectEdgeRequest = Schema.Struct({ nickname: Schema.optional(EdgeNickname) });

// --- responses ---
const Timestamp = Schema.String.annotations({ format: "date-time" });
const Stamps = { created_at: Timestamp, updated_at: Timestamp };
export const ClientSecret = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  secret: Schema.String,
  last_used_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
});
export const Edge = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  nickname: Schema.String,
  description: Schema.String,
  owner: Schema.optional(Schema.Struct({ user_uuid: Schema.String })),
  client_secret: Schema.optional(Schema.String),
  secrets: Schema.Array(ClientSecret),
  ...Stamps,
});
export const EdgeOwner = Schema.Struct({ user_uuid: Schema.String });
export const Group = Schema.Struct({
  uuid: Schema.String,
  parent_group_uuid: Schema.NullOr(Schema.String),
  name: Schema.String,
  ...Stamps,
});
export const Project = Schema.Struct({
  uuid: Schema.String,
  parent_group_uuid: Schema.String,
  name: Schema.String,
  ...Stamps,
});
const Email = Schema.Struct({ id: Schema.Int, address: Schema.String, verified: Schema.Boolean, ...Stamps });
export const Member = Schema.Struct({
  user_uuid: Schema.String,
  name: Schema.String,
  emails: Schema.Array(Email),
  inherited_role_uuids: Schema.Array(Schema.String),
  role_uuids: Schema.Array(Schema.String),
  is_owner: Schema.Boolean,
  ...Stamps,
});
export const ProjectEdge = Schema.Struct({
  edge_uuid: Schema.String,
  name: Schema.String,
  nickname: Schema.String,
  ...Stamps,
});
export const Edges = listOf(Edge);
export const Groups = listOf(Group);
export const Projects = listOf(Project);
export const Members = listOf(Member);
export const ProjectEdges = listOf(ProjectEdge);
export const ClientSecrets = listOf(ClientSecret);
