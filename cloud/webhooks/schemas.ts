// Request and response schemas of the webhook routes (intdash HookCreateRequest, HookUpdateRequest,
// HookTestRequest, Hook, HookDelivery).
import * as Schema from "effect/Schema";
import { PageFields, PageInfoSchema } from "../http/query.js";
import { Uuid } from "../measurements/schemas.js";
import { EVENT_KINDS } from "./service/render.js";

const Flag = Schema.optional(Schema.Boolean);
const Url = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048));
const Secret = Schema.String.pipe(Schema.maxLength(256));

/** Each event kind as the response spells it (`measurements_event`); creation also takes intdash's plural (`measurements_events`). */
const singular = Object.fromEntries(EVENT_KINDS.map((k) => [k, Flag])) as {
  [K in (typeof EVENT_KINDS)[number]]: typeof Flag;
};
const plural = Object.fromEntries(EVENT_KINDS.map((k) => [`${k}s`, Flag])) as {
  [K in `${(typeof EVENT_KINDS)[number]}s`]: typeof Flag;
};

export const HookCreateRequest = Schema.Struct({ url: Url, secret: Schema.optional(Secret), ...singular, ...plural });
export const HookUpdateRequest = Schema.Struct({
  url: Schema.optional(Url),
  secret: Schema.optional(Secret),
  ...singular,
});
export const HookTestRequest = Schema.Struct({
  resource_type: Schema.optional(
    Schema.Literal("edge", "project_edge", "user", "project_member", "measurement", "edge_connection", "tenant"),
  ),
  action: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
});

export const HookParams = Schema.Struct({ project_uuid: Uuid, hook_uuid: Uuid });
export const ProjectParams = Schema.Struct({ project_uuid: Uuid });
export const DeliveryParams = Schema.Struct({ project_uuid: Uuid, hook_delivery_uuid: Uuid });
export const PageQuery = Schema.Struct(PageFields);
const Page = PageInfoSchema;

export const Hook = Schema.Struct({
  uuid: Schema.String,
  url: Schema.String,
  ...(Object.fromEntries(EVENT_KINDS.map((k) => [k, Schema.Boolean])) as {
    [K in (typeof EVENT_KINDS)[number]]: typeof Schema.Boolean;
  }),
  is_shared_global: Schema.Boolean,
  enabled: Schema.Boolean,
  created_at: Schema.String,
  updated_at: Schema.String,
});
export const HookCreateResponse = Schema.Struct({ ...Hook.fields, secret: Schema.optional(Schema.String) });
export const Hooks = Schema.Struct({ items: Schema.Array(Hook), page: Page });

export const HookDelivery = Schema.Struct({
  uuid: Schema.String,
  hook_uuid: Schema.String,
  redelivered_by: Schema.optional(Schema.String),
  status: Schema.Literal("processing", "succeeded", "failed"),
  reason: Schema.String,
  is_test: Schema.Boolean,
  attempts: Schema.Int,
  request: Schema.optional(
    Schema.Struct({ headers: Schema.optional(Schema.String), body: Schema.optional(Schema.String) }),
  ),
  response: Schema.optional(
    Schema.Struct({
      status: Schema.optional(Schema.Int),
      headers: Schema.optional(Schema.String),
      body: Schema.optional(Schema.String),
    }),
  ),
  finished_at: Schema.optional(Schema.String),
  created_at: Schema.String,
});
export const HookDeliveries = Schema.Struct({ items: Schema.Array(HookDelivery), page: Page });
