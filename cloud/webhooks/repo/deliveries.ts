// Webhook deliveries (webhook_deliveries): each request sent (or being sent) and what came back.
import type { Queryable } from "../../database/db.js";

export interface DeliveryRow {
  uuid: string;
  hook_uuid: string;
  project_uuid: string;
  redelivered_by: string | null;
  status: "processing" | "succeeded" | "failed";
  reason: string;
  is_test: number;
  attempts: number;
  request_headers: string | null;
  request_body: string;
  response_status: number | null;
  response_headers: string | null;
  response_body: string | null;
  finished_at: string | null;
  created_at: string;
}

export async function insertDelivery(q: Queryable, r: DeliveryRow): Promise<void> {
  await q.run(
    `INSERT INTO webhook_deliveries (uuid, hook_uuid, project_uuid, redelivered_by, status, reason, is_test, attempts, request_headers, request_body,
       response_status, response_headers, response_body, finished_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      r.uuid,
      r.hook_uuid,
      r.project_uuid,
      r.redelivered_by,
      r.status,
      r.reason,
      r.is_test,
      r.attempts,
      r.request_headers,
      r.request_body,
      r.response_status,
      r.response_headers,
      r.response_body,
      r.finished_at,
      r.created_at,
    ],
  );
}

/** One attempt's outcome (the last attempt's request and response are kept). */
export async function recordAttempt(
  q: Queryable,
  uuid: string,
  r: Pick<
    DeliveryRow,
    | "status"
    | "reason"
    | "attempts"
    | "request_headers"
    | "response_status"
    | "response_headers"
    | "response_body"
    | "finished_at"
  >,
): Promise<void> {
  await q.run(
    "UPDATE webhook_deliveries SET status = ?, reason = ?, attempts = ?, request_headers = ?, response_status = ?, response_headers = ?, response_body = ?, finished_at = ? WHERE uuid = ?",
    [
      r.status,
      r.reason,
      r.attempts,
      r.request_headers,
      r.response_status,
      r.response_headers,
      r.response_body,
      r.finished_at,
      uuid,
    ],
  );
}

export const findDelivery = (q: Queryable, project: string, uuid: string) =>
  q.get<DeliveryRow>("SELECT * FROM webhook_deliveries WHERE project_uuid = ? AND uuid = ?", [project, uuid]);

export async function pageOfDeliveries(
  q: Queryable,
  project: string,
  hook: string | undefined,
  limit: number,
  offset: number,
): Promise<{ rows: DeliveryRow[]; total: number }> {
  const where = hook === undefined ? "project_uuid = ?" : "project_uuid = ? AND hook_uuid = ?";
  const args = hook === undefined ? [project] : [project, hook];
  const total =
    (await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE ${where}`, args))?.n ?? 0;
  const rows = await q.all<DeliveryRow>(
    `SELECT * FROM webhook_deliveries WHERE ${where} ORDER BY created_at DESC, uuid LIMIT ? OFFSET ?`,
    [...args, limit, offset],
  );
  return { rows, total };
}

/** Deliveries a stopped peer left unfinished: they end as failed at the next start. */
export const failInterrupted = (q: Queryable, now: string) =>
  q.run(
    "UPDATE webhook_deliveries SET status = 'failed', reason = 'interrupted: the peer stopped', finished_at = ? WHERE status = 'processing'",
    [now],
  );
