// A project's webhooks and their deliveries under intdash's operationIds (WebhookProjectWebhookApi,
// WebhookProjectWebhookDeliveryApi), guarded like every other project path.
import { defineRoute, type AnyRoute } from "../../http/route.js";
import type { Services } from "../../services.js";
import { existingProject } from "../../org/service/project-checks.js";
import { EVENT_KINDS, type EventKind } from "../service/render.js";
import type { HookInput } from "../service/webhook-service.js";
import {
  DeliveryParams,
  HookCreateRequest,
  HookDeliveries,
  HookDelivery,
  HookParams,
  Hooks,
  HookCreateResponse,
  Hook,
  HookTestRequest,
  HookUpdateRequest,
  PageQuery,
  ProjectParams,
} from "../schemas.js";

const TAG = "webhook";
const P = "/projects/{project_uuid}";

/** The path's project: it must exist (the default project keeps no webhooks). */
const project = (svc: Services, uuid: string) => existingProject(svc.org.index, uuid, false);

function inputOf(body: Record<string, unknown>): HookInput {
  const events: Partial<Record<EventKind, boolean>> = {};
  for (const k of EVENT_KINDS) {
    const v = body[k] ?? body[`${k}s`];
    if (typeof v === "boolean") events[k] = v;
  }
  return { url: body.url as string | undefined, secret: body.secret as string | undefined, events };
}

/** `PUT .../enable` and `.../disable`: the hook's one flag. */
const switchRoute = (enabled: boolean) =>
  defineRoute({
    operationId: enabled ? "enableProjectWebhook" : "disableProjectWebhook",
    method: "PUT",
    path: `${P}/hooks/{hook_uuid}/${enabled ? "enable" : "disable"}`,
    tag: TAG,
    params: HookParams,
    success: 200,
    response: Hook,
    errors: [404],
    handler: ({ params }, svc) =>
      svc.webhooks.update(project(svc, params.project_uuid), params.hook_uuid, { events: {}, enabled }),
  });

export const hookRoutes: AnyRoute[] = [
  defineRoute({
    operationId: "createProjectWebhook",
    method: "POST",
    path: `${P}/hooks`,
    tag: TAG,
    params: ProjectParams,
    body: HookCreateRequest,
    success: 201,
    response: HookCreateResponse,
    handler: ({ params, body }, svc) => svc.webhooks.create(project(svc, params.project_uuid), inputOf(body)),
  }),
  defineRoute({
    operationId: "listProjectWebhooks",
    method: "GET",
    path: `${P}/hooks`,
    tag: TAG,
    params: ProjectParams,
    query: PageQuery,
    success: 200,
    response: Hooks,
    handler: ({ params, query }, svc) =>
      svc.webhooks.list(project(svc, params.project_uuid), query.page, query.per_page),
  }),
  defineRoute({
    operationId: "getProjectWebhook",
    method: "GET",
    path: `${P}/hooks/{hook_uuid}`,
    tag: TAG,
    params: HookParams,
    success: 200,
    response: Hook,
    errors: [404],
    handler: ({ params }, svc) => svc.webhooks.get(project(svc, params.project_uuid), params.hook_uuid),
  }),
  defineRoute({
    operationId: "updateProjectWebhook",
    method: "PATCH",
    path: `${P}/hooks/{hook_uuid}`,
    tag: TAG,
    params: HookParams,
    body: HookUpdateRequest,
    success: 200,
    response: Hook,
    errors: [404],
    handler: ({ params, body }, svc) =>
      svc.webhooks.update(project(svc, params.project_uuid), params.hook_uuid, inputOf(body)),
  }),
  defineRoute({
    operationId: "deleteProjectWebhook",
    method: "DELETE",
    path: `${P}/hooks/{hook_uuid}`,
    tag: TAG,
    params: HookParams,
    success: 204,
    errors: [404],
    handler: async ({ params }, svc) => {
      await svc.webhooks.remove(project(svc, params.project_uuid), params.hook_uuid);
    },
  }),
  switchRoute(true),
  switchRoute(false),
  defineRoute({
    operationId: "testProjectWebhook",
    method: "PUT",
    path: `${P}/hooks/{hook_uuid}/test`,
    tag: TAG,
    summary: "Send one test delivery now and answer its outcome",
    params: HookParams,
    body: HookTestRequest,
    success: 200,
    response: HookDelivery,
    errors: [404],
    handler: ({ params, body }, svc) =>
      svc.webhooks.test(
        project(svc, params.project_uuid),
        params.hook_uuid,
        body?.resource_type ?? "measurement",
        body?.action ?? "created",
      ),
  }),
  defineRoute({
    operationId: "listProjectWebhookDeliveriesOfHook",
    method: "GET",
    path: `${P}/hooks/{hook_uuid}/hook_deliveries`,
    tag: TAG,
    params: HookParams,
    query: PageQuery,
    success: 200,
    response: HookDeliveries,
    errors: [404],
    handler: ({ params, query }, svc) =>
      svc.webhooks.deliveries(project(svc, params.project_uuid), params.hook_uuid, query.page, query.per_page),
  }),
  defineRoute({
    operationId: "listProjectWebhookDeliveries",
    method: "GET",
    path: `${P}/hook_deliveries`,
    tag: TAG,
    params: ProjectParams,
    query: PageQuery,
    success: 200,
    response: HookDeliveries,
    handler: ({ params, query }, svc) =>
      svc.webhooks.deliveries(project(svc, params.project_uuid), undefined, query.page, query.per_page),
  }),
  defineRoute({
    operationId: "getProjectWebhookDelivery",
    method: "GET",
    path: `${P}/hook_deliveries/{hook_delivery_uuid}`,
    tag: TAG,
    params: DeliveryParams,
    success: 200,
    response: HookDelivery,
    errors: [404],
    handler: ({ params }, svc) => svc.webhooks.delivery(project(svc, params.project_uuid), params.hook_delivery_uuid),
  }),
  defineRoute({
    operationId: "redeliverProjectWebhook",
    method: "PUT",
    path: `${P}/hook_deliveries/{hook_delivery_uuid}/redeliver`,
    tag: TAG,
    params: DeliveryParams,
    success: 200,
    response: HookDelivery,
    errors: [404],
    handler: ({ params }, svc) => svc.webhooks.redeliver(project(svc, params.project_uuid), params.hook_delivery_uuid),
  }),
];
