// Request and response schemas of the OAuth2 client operations, with the spec's limits.
import * as Schema from "effect/Schema";
import { PageFields, StringArrayQuery, listOf, sortQuery } from "../http/query.js";

const bounded = (min: number, max: number) => Schema.String.pipe(Schema.minLength(min), Schema.maxLength(max));
const Uuid = Schema.String.pipe(
  Schema.pattern(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, {
    message: () => "expected a UUID",
  }),
);

export const AUTH_METHODS = ["client_secret_post", "tls_client_auth", "client_secret_basic", "none"] as const;
export const RedirectUris = Schema.Array(bounded(1, 256)).pipe(Schema.maxItems(10));

export const ClientParams = Schema.Struct({ client_id: bounded(1, 256) });
export const UserClientParams = Schema.Struct({ user_uuid: Uuid });
export const ClientSecretParams = Schema.Struct({
  client_id: bounded(1, 256),
  secret_id: Schema.NumberFromString.pipe(Schema.int(), Schema.positive()),
});

export const ListClientsQuery = Schema.Struct({
  "id[]": StringArrayQuery,
  "name[]": StringArrayQuery,
  sort: sortQuery(["name", "created_at", "updated_at", "client_id"]),
  ...PageFields,
});
export const PageQuery = Schema.Struct({ ...PageFields });

export const CreateClientRequest = Schema.Struct({
  name: bounded(1, 256),
  grant_type: Schema.Literal("authorization_code", "client_credentials"),
  redirect_uris: Schema.optional(RedirectUris),
  token_endpoint_auth_method: Schema.optionalWith(Schema.Literal(...AUTH_METHODS), {
    default: () => "client_secret_post" as const,
  }),
  tls_client_auth_subject_dn: Schema.optional(Schema.String.pipe(Schema.maxLength(512))),
});
export type CreateClientRequest = typeof CreateClientRequest.Type;

export const UpdateClientRequest = Schema.Struct({
  name: Schema.optional(bounded(1, 256)),
  redirect_uris: Schema.optional(RedirectUris),
});

export const CreateSecretRequest = Schema.Struct({ name: bounded(1, 511) });

export const ClientSecret = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  secret: Schema.String.annotations({
    description: "the secret itself only in the response that creates it, else empty",
  }),
  last_used_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
});

const clientFields = {
  client_id: Schema.String,
  name: Schema.String,
  secrets: Schema.Array(ClientSecret),
  grant_types: Schema.Array(Schema.String),
  token_endpoint_auth_method: Schema.String,
  redirect_uris: Schema.Array(Schema.String),
  response_types: Schema.Array(Schema.String),
  scopes: Schema.Array(Schema.String),
  audiences: Schema.Array(Schema.String),
  tls_client_auth_subject_dn: Schema.String,
  user_uuid: Schema.optional(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
};
export const OAuth2Client = Schema.Struct(clientFields);
export const OAuth2ClientWithSecret = Schema.Struct({ ...clientFields, client_secret: Schema.optional(Schema.String) });
export const OAuth2Clients = listOf(OAuth2Client);
