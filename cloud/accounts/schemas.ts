// Request and response schemas of the accounts routes, carrying the spec's limits. The same
// schemas validate requests and generate the OpenAPI document.
import * as Schema from "effect/Schema";
import { BoolFromQuery, IntFromQuery, PageFields, StringArrayQuery, listOf, sortQuery } from "../http/query.js";
import { USER_SORT_KEYS } from "./repo/users.js";

const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const UuidText = Schema.String.pipe(Schema.pattern(UUID_PATTERN, { message: () => "expected a UUID" })).annotations({
  jsonSchema: { format: "uuid", pattern: UUID_PATTERN.source },
});
/** UUIDs compare case-insensitively (RFC 9562); stored ones are lowercase, so inputs decode to lowercase. */
export const Uuid = Schema.transform(UuidText, UuidText, {
  strict: true,
  decode: (s) => s.toLowerCase(),
  encode: (s) => s,
});
/** Integer ids in paths: decimal digits only (no "1e3", no "0x10"). */
const Id = Schema.compose(
  Schema.String.pipe(Schema.pattern(/^[0-9]{1,15}$/, { message: () => "expected a positive integer id" })),
  Schema.NumberFromString,
).pipe(Schema.int(), Schema.greaterThanOrEqualTo(1));
const DateTime = Schema.String.pipe(
  Schema.filter(
    (s) =>
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(s) && !Number.isNaN(Date.parse(s)),
    {
      message: () => "expected an RFC 3339 date-time",
    },
  ),
).annotations({ format: "date-time" });
const bounded = (min: number, max: number) => Schema.String.pipe(Schema.minLength(min), Schema.maxLength(max));

export const UserName = bounded(1, 256).pipe(
  Schema.pattern(/^[0-9a-zA-Z\-_]*$/, { message: () => "only letters, digits, - and _" }),
);
export const Nickname = Schema.String.pipe(Schema.maxLength(512));
export const Description = Schema.String.pipe(Schema.maxLength(65536));
export const Address = bounded(1, 256).pipe(
  Schema.pattern(/^[^@\s]+@[^@\s]+$/, { message: () => "expected an e-mail address" }),
);

// --- path parameters ---
export const UserParams = Schema.Struct({ user_uuid: Uuid });
export const RoleParams = Schema.Struct({ role_uuid: Uuid });
export const ScopeParams = Schema.Struct({ scope_uuid: Uuid });
export const UserRoleParams = Schema.Struct({ user_uuid: Uuid, role_uuid: Uuid });
export const EmailParams = Schema.Struct({ user_email_id: Id });
export const UserEmailParams = Schema.Struct({ user_uuid: Uuid, user_email_id: Id });
export const TokenParams = Schema.Struct({ user_api_token_id: Id });
export const UserTokenParams = Schema.Struct({ user_uuid: Uuid, user_api_token_id: Id });

// --- queries ---
export const PageQuery = Schema.Struct({ ...PageFields });
const UuidArrayQuery = Schema.optional(Schema.Array(Uuid));
export const CatalogueQuery = Schema.Struct({ "uuid[]": UuidArrayQuery, "name[]": StringArrayQuery, ...PageFields });
export const ListUsersQuery = Schema.Struct({
  "uuid[]": UuidArrayQuery,
  "role_uuid[]": UuidArrayQuery,
  "name[]": StringArrayQuery,
  "nickname[]": StringArrayQuery,
  "email[]": StringArrayQuery,
  disabled: Schema.optional(BoolFromQuery),
  is_super: Schema.optional(BoolFromQuery),
  is_temporary: Schema.optional(BoolFromQuery),
  min_sign_in_attempt_count: Schema.optional(IntFromQuery(0)),
  max_sign_in_attempt_count: Schema.optional(IntFromQuery(0)),
  sort: sortQuery(USER_SORT_KEYS),
  ...PageFields,
});
export const VerifyLinkQuery = Schema.Struct({ verification_token: bounded(1, 4096), email_id: Schema.optional(Id) });

// --- request bodies ---
export const CreateUserRequest = Schema.Struct({
  name: UserName,
  nickname: Schema.optional(Nickname),
  description: Schema.optional(Description),
  role_uuids: Schema.Array(Uuid).pipe(Schema.maxItems(64)),
  email: Schema.optional(Address),
});
export const PatchUserRequest = Schema.Struct({
  name: Schema.optional(UserName),
  nickname: Schema.optional(Nickname),
  description: Schema.optional(Description),
});
export const EmailRequest = Schema.Struct({ address: Address });
export const VerifyEmailRequest = Schema.Struct({ verification_token: bounded(1, 4096) });
export const ChangePasswordRequest = Schema.Struct({
  password: bounded(8, 512),
  old_password: Schema.optional(Schema.String.pipe(Schema.maxLength(512))),
  recovery_token: Schema.optional(bounded(1, 4096)),
});
export const CheckPasswordRequest = Schema.Struct({ password: Schema.String.pipe(Schema.maxLength(512)) });
export const PasswordRecoveryRequest = Schema.Struct({ address: Address });
export const CreateTokenRequest = Schema.Struct({ name: bounded(1, 256), expired_at: Schema.optional(DateTime) });
export const UpdateTokenRequest = Schema.Struct({ name: Schema.String.pipe(Schema.maxLength(256)) });
export const IntrospectRequest = Schema.Struct({ token: bounded(1, 4096) });

// --- responses (documentation) ---
const Ts = { created_at: Schema.String, updated_at: Schema.String };
const NullableTime = Schema.NullOr(Schema.String);
export const EmailResponse = Schema.Struct({ id: Schema.Int, address: Schema.String, verified: Schema.Boolean, ...Ts });
export const VerificationResponse = Schema.Struct({ email_id: Schema.Int, expired_at: Schema.String, ...Ts });
export const PasswordResponse = Schema.Struct({
  attempt_count: Schema.Int,
  is_temporary: Schema.Boolean,
  temporary_password: Schema.optional(Schema.String),
  last_attempt_at: NullableTime,
  expired_at: Schema.optional(Schema.String),
  ...Ts,
});
const Endpoint = Schema.Struct({ path: Schema.String, method: Schema.String });
export const ScopeResponse = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  allowed_endpoints: Schema.Array(Endpoint),
  allowed_iscp_messages: Schema.Array(Schema.Struct({ type: Schema.String })),
  denied_endpoints: Schema.Array(Endpoint),
  created_at: Schema.optional(Schema.String),
  updated_at: Schema.optional(Schema.String),
});
export const RoleResponse = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  scopes: Schema.Array(ScopeResponse),
  ...Ts,
});
export const UserResponse = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  nickname: Schema.String,
  description: Schema.String,
  disabled: Schema.Boolean,
  is_super: Schema.Boolean,
  emails: Schema.Array(EmailResponse),
  password: PasswordResponse,
  roles: Schema.Array(Schema.String),
  last_sign_in_at: NullableTime,
  ...Ts,
});
export const TokenResponse = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  token: Schema.optional(Schema.String),
  scopes: Schema.Array(ScopeResponse),
  last_used_at: NullableTime,
  expired_at: NullableTime,
  ...Ts,
});
export const IntrospectResponse = Schema.Struct({
  active: Schema.Boolean,
  tenant_id: Schema.optional(Schema.String),
  user_uuid: Schema.optional(Schema.String),
  scopes: Schema.optional(Schema.Array(ScopeResponse)),
  expired_at: Schema.optional(NullableTime),
  created_at: Schema.optional(Schema.String),
});
export const CheckPasswordResponse = Schema.Struct({
  valid: Schema.Boolean,
  errors: Schema.Array(
    Schema.Struct({ type: Schema.String, value: Schema.optional(Schema.Int), message: Schema.String }),
  ),
});
export const Users = listOf(UserResponse);
export const Roles = listOf(RoleResponse);
export const Scopes = listOf(ScopeResponse);
export const Tokens = listOf(TokenResponse);
