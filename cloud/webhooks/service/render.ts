// The webhook API's shapes (intdash Hook, HookDelivery, HookPage) from stored rows.
import type { DeliveryRow } from "../repo/deliveries.js";
import type { HookRow } from "../repo/hooks.js";

export const EVENT_KINDS = [
  "edges_event",
  "measurements_event",
  "users_event",
  "edge_connections_event",
  "project_edges_event",
  "project_members_event",
  "tenants_event",
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export const eventsOf = (r: HookRow): Record<EventKind, boolean> => {
  const stored = JSON.parse(r.events) as Partial<Record<EventKind, boolean>>;
  return Object.fromEntries(EVENT_KINDS.map((k) => [k, stored[k] === true])) as Record<EventKind, boolean>;
};

export function renderHook(r: HookRow) {
  return {
    uuid: r.uuid,
    url: r.url,
    ...eventsOf(r),
    is_shared_global: false,
    enabled: r.enabled === 1,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function renderDelivery(r: DeliveryRow) {
  return {
    uuid: r.uuid,
    hook_uuid: r.hook_uuid,
    ...(r.redelivered_by ? { redelivered_by: r.redelivered_by } : {}),
    status: r.status,
    reason: r.reason,
    is_test: r.is_test === 1,
    attempts: r.attempts,
    request: { ...(r.request_headers !== null ? { headers: r.request_headers } : {}), body: r.request_body },
    ...(r.response_status !== null
      ? { response: { status: r.response_status, headers: r.response_headers ?? "", body: r.response_body ?? "" } }
      : {}),
    ...(r.finished_at ? { finished_at: r.finished_at } : {}),
    created_at: r.created_at,
  };
}
