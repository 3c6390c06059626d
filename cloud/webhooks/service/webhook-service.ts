// svc.webhooks: a project's hooks (create, list, get, update, enable/disable, delete, test) and their
// deliveries, sent in the background with retries and recorded.
import crypto from "node:crypto";
import type { Logger } from "pino";
import { Invalid, NotFound } from "../../errors.js";
import { generateSecret } from "../../oauth/service/secrets.js";
import type { Db } from "../../database/db.js";
import * as hooks from "../repo/hooks.js";
import * as deliveries from "../repo/deliveries.js";
import type { HookRow } from "../repo/hooks.js";
import { deliver } from "./delivery.js";
import { pageInfo } from "../../http/query.js";
import { EVENT_KINDS, eventsOf, renderDelivery, renderHook, type EventKind } from "./render.js";

export interface HookInput {
  url?: string;
  secret?: string;
  events: Partial<Record<EventKind, boolean>>;
}

/** What the hooks are told: `resource_type`, `action` and the resource's own fields. */
export interface HookEvent {
  resource_type: string;
  action: string;
  fields: Record<string, string>;
  kind: EventKind;
}

const hookNotFound = () => new NotFound("webhook not found");

function checkUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Invalid("invalid body: url: must be an absolute http or https URL", { url: "invalid" });
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    throw new Invalid("invalid body: url: must be an absolute http or https URL", { url: "invalid" });
}

export class WebhookService {
  /** Tries per delivery and the first pause between them (doubling); tests shorten it. */
  retry = { attempts: 5, backoffMs: 1000 };
  private readonly stop = new AbortController();
  private readonly running = new Set<Promise<unknown>>();
  /** Enabled hooks by project, for the event path. */
  private byProject = new Map<string, HookRow[]>();

  /**
   * Awaited before each measurement event is examined, in that measurement's turn (its later events wait
   * behind it); tests hold a turn here to let later changes commit first.
   */
  beforeMeasurementEvent: (measUuid: string) => Promise<void> | undefined = () => undefined;

  /** Told after every change whether any enabled hook wants measurement events. */
  onHooksChanged: (measurementHooks: boolean) => void = () => {};

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    await deliveries.failInterrupted(this.db, new Date().toISOString());
    await this.reload();
  }

  private async reload(): Promise<void> {
    const map = new Map<string, HookRow[]>();
    for (const h of await hooks.enabledHooks(this.db)) map.set(h.project_uuid, [...(map.get(h.project_uuid) ?? []), h]);
    this.byProject = map;
    this.onHooksChanged([...map.values()].some((hs) => hs.some((h) => eventsOf(h).measurements_event)));
  }

  /** Whether any enabled hook of the project wants this kind of event. */
  wants(project: string, kind: EventKind): boolean {
    return (this.byProject.get(project) ?? []).some((h) => eventsOf(h)[kind]);
  }

  private async require(project: string, uuid: string): Promise<HookRow> {
    const h = await hooks.findHook(this.db, project, uuid.toLowerCase());
    if (!h) throw hookNotFound();
    return h;
  }

  async create(project: string, input: HookInput) {
    if (input.url === undefined) throw new Invalid("invalid body: url: required", { url: "required" });
    checkUrl(input.url);
    const now = new Date().toISOString();
    const generated = input.secret ? undefined : generateSecret();
    const row: HookRow = {
      uuid: crypto.randomUUID(),
      project_uuid: project,
      url: input.url,
      secret: input.secret || generated!,
      events: JSON.stringify(input.events),
      enabled: 1,
      created_at: now,
      updated_at: now,
    };
    await hooks.insertHook(this.db, row);
    await this.reload();
    return { ...renderHook(row), ...(generated ? { secret: generated } : {}) };
  }

  async list(project: string, page: number, perPage: number) {
    const total = await hooks.countHooks(this.db, project);
    const rows = await hooks.pageOfHooks(this.db, project, perPage, (page - 1) * perPage);
    return { items: rows.map(renderHook), page: pageInfo(total, page, perPage) };
  }

  async get(project: string, uuid: string) {
    return renderHook(await this.require(project, uuid));
  }

  async update(project: string, uuid: string, input: HookInput & { enabled?: boolean }) {
    const h = await this.require(project, uuid);
    if (input.url !== undefined) checkUrl(input.url);
    const events = {
      ...eventsOf(h),
      ...Object.fromEntries(EVENT_KINDS.filter((k) => input.events[k] !== undefined).map((k) => [k, input.events[k]])),
    };
    const next = {
      uuid: h.uuid,
      url: input.url ?? h.url,
      secret: input.secret || h.secret,
      events: JSON.stringify(events),
      enabled: input.enabled === undefined ? h.enabled : input.enabled ? 1 : 0,
      updated_at: new Date().toISOString(),
    };
    await hooks.updateHook(this.db, next);
    await this.reload();
    return renderHook({ ...h, ...next });
  }

  async remove(project: string, uuid: string): Promise<void> {
    await this.require(project, uuid);
    await hooks.deleteHook(this.db, project, uuid.toLowerCase());
    await this.reload();
  }

  /** The test call: one try, answered with its outcome. */
  async test(project: string, uuid: string, resourceType: string, action: string) {
    const h = await this.require(project, uuid);
    const fields: Record<string, string> = {
      [`${resourceType === "project_member" ? "member" : resourceType}_uuid`]: crypto.randomUUID(),
    };
    const d = await this.send(
      h,
      { resource_type: resourceType, action, fields, kind: "measurements_event" },
      { test: true, attempts: 1 },
    );
    await d.done;
    return renderDelivery((await deliveries.findDelivery(this.db, project, d.uuid))!);
  }

  /** Delivers an event to every enabled hook of the project that wants its kind. */
  dispatch(project: string, e: HookEvent): void {
    for (const h of this.byProject.get(project) ?? [])
      if (eventsOf(h)[e.kind])
        void this.send(h, e, { test: false, attempts: this.retry.attempts }).catch((err) =>
          this.log.warn({ err: String(err), hook: h.uuid }, "webhook delivery could not be recorded"),
        );
  }

  private async send(
    h: HookRow,
    e: HookEvent,
    o: { test: boolean; attempts: number; redeliveredBy?: string; body?: string },
  ) {
    const uuid = crypto.randomUUID();
    const now = new Date().toISOString();
    const body =
      o.body ??
      JSON.stringify({
        delivery_uuid: uuid,
        hook_uuid: h.uuid,
        resource_type: e.resource_type,
        action: e.action,
        project_uuid: h.project_uuid,
        ...e.fields,
        is_test: o.test,
        occurred_at: now,
      });
    await deliveries.insertDelivery(this.db, {
      uuid,
      hook_uuid: h.uuid,
      project_uuid: h.project_uuid,
      redelivered_by: o.redeliveredBy ?? null,
      status: "processing",
      reason: "",
      is_test: o.test ? 1 : 0,
      attempts: 0,
      request_headers: null,
      request_body: body,
      response_status: null,
      response_headers: null,
      response_body: null,
      finished_at: null,
      created_at: now,
    });
    const done = deliver(
      this.db,
      { uuid, url: h.url, secret: h.secret, body, attempts: o.attempts, backoffMs: this.retry.backoffMs },
      this.stop.signal,
    ).catch((err) => {
      this.log.warn({ err: String(err), hook: h.uuid }, "webhook delivery could not be recorded");
      return false;
    });
    this.running.add(done);
    void done.finally(() => this.running.delete(done));
    return { uuid, done };
  }

  async deliveries(project: string, hook: string | undefined, page: number, perPage: number) {
    if (hook !== undefined) await this.require(project, hook);
    const { rows, total } = await deliveries.pageOfDeliveries(
      this.db,
      project,
      hook?.toLowerCase(),
      perPage,
      (page - 1) * perPage,
    );
    return { items: rows.map(renderDelivery), page: pageInfo(total, page, perPage) };
  }

  async delivery(project: string, uuid: string) {
    const d = await deliveries.findDelivery(this.db, project, uuid.toLowerCase());
    if (!d) throw new NotFound("webhook delivery not found");
    return renderDelivery(d);
  }

  /** Sends a delivery's body again as a new delivery (redelivered_by names the first). */
  async redeliver(project: string, uuid: string) {
    const d = await deliveries.findDelivery(this.db, project, uuid.toLowerCase());
    if (!d) throw new NotFound("webhook delivery not found");
    const h = await this.require(project, d.hook_uuid);
    const again = await this.send(
      h,
      { resource_type: "", action: "", fields: {}, kind: "measurements_event" },
      { test: d.is_test === 1, attempts: this.retry.attempts, redeliveredBy: d.uuid, body: d.request_body },
    );
    return renderDelivery((await deliveries.findDelivery(this.db, project, again.uuid))!);
  }

  /** Stops retries and waits for the requests in flight. */
  async close(): Promise<void> {
    this.stop.abort();
    await Promise.allSettled([...this.running]);
  }
}

declare module "../../services.js" {
  interface Services {
    webhooks: WebhookService;
  }
}
