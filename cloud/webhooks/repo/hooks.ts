// Webhooks (webhook_hooks): where a project's events are delivered, with which secret.
import type { Queryable } from "../../database/db.js";

export interface HookRow {
  uuid: string;
  project_uuid: string;
  url: string;
  secret: string;
  /** JSON object: event kind (e.g. measurements_event) to boolean. */
  events: string;
  enabled: number;
  created_at: string;
  updated_at: string;
}

export async function insertHook(q: Queryable, r: HookRow): Promise<void> {
  await q.run(
    "INSERT INTO webhook_hooks (uuid, project_uuid, url, secret, events, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    [r.uuid, r.project_uuid, r.url, r.secret, r.events, r.enabled, r.created_at, r.updated_at],
  );
}

export async function updateHook(
  q: Queryable,
  r: Pick<HookRow, "uuid" | "url" | "secret" | "events" | "enabled" | "updated_at">,
): Promise<void> {
  await q.run("UPDATE webhook_hooks SET url = ?, secret = ?, events = ?, enabled = ?, updated_at = ? WHERE uuid = ?", [
    r.url,
    r.secret,
    r.events,
    r.enabled,
    r.updated_at,
    r.uuid,
  ]);
}

export const findHook = (q: Queryable, project: string, uuid: string) =>
  q.get<HookRow>("SELECT * FROM webhook_hooks WHERE project_uuid = ? AND uuid = ?", [project, uuid]);

export const countHooks = async (q: Queryable, project: string) =>
  (await q.get<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_hooks WHERE project_uuid = ?", [project]))?.n ?? 0;

export const pageOfHooks = (q: Queryable, project: string, limit: number, offset: number) =>
  q.all<HookRow>("SELECT * FROM webhook_hooks WHERE project_uuid = ? ORDER BY created_at, uuid LIMIT ? OFFSET ?", [
    project,
    limit,
    offset,
  ]);

export const enabledHooks = (q: Queryable) => q.all<HookRow>("SELECT * FROM webhook_hooks WHERE enabled = 1");

export const deleteHook = (q: Queryable, project: string, uuid: string) =>
  q.run("DELETE FROM webhook_hooks WHERE project_uuid = ? AND uuid = ?", [project, uuid]);
