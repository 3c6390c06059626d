// Errors are thrown as typed values and rendered in one place (http/app.ts), in the spec's
// `{type, title}` shape with an optional `properties` object naming invalid fields.

export type ErrorType =
  | "about:blank"
  | "invalid_request"
  | "unauthorized"
  | "conflict"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "payload_too_large"
  | "unsupported_media_type"
  | "account_locked"
  | "exceeded_max_groups_count"
  | "exceeded_max_projects_count_per_group"
  | "conflict_project_edge_uuid"
  | "conflict_project_edge_nickname"
  | "insufficient_storage"
  | "service_unavailable"
  | "internal_error";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly title: string,
    readonly properties?: Record<string, string>,
    readonly headers?: Record<string, string>,
  ) {
    super(title);
  }

  toBody(): { type: string; title: string; properties?: Record<string, string> } {
    return this.properties ? { type: this.type, title: this.title, properties: this.properties } : { type: this.type, title: this.title };
  }
}

export const badRequest = (title: string, properties?: Record<string, string>) =>
  new ApiError(400, "invalid_request", title, properties);
export const unauthorized = (title = "authentication required") =>
  new ApiError(401, "unauthorized", title, undefined, {
    "WWW-Authenticate": 'Bearer realm="api", X-Intdash-Token realm="api"',
  });
export const forbidden = (title = "access denied") => new ApiError(403, "forbidden", title);
export const notFound = (title = "resource not found") => new ApiError(404, "not_found", title);
export const conflict = (title: string, properties?: Record<string, string>) =>
  new ApiError(409, "conflict", title, properties);

/** The disk holding the data is full (storage/db.ts isStorageFull): a server condition the client may retry, never a 500. */
export const storageFull = () =>
  new ApiError(507, "insufficient_storage", "the server's storage is full: nothing of this request was stored", undefined, { "Retry-After": "60" });

const TYPE_BY_STATUS: Partial<Record<number, ErrorType>> = {
  400: "invalid_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
  409: "conflict", 413: "payload_too_large", 415: "unsupported_media_type", 500: "internal_error",
};

/** The `{type, title}` body for `status`, for answers written outside Koa (a refused WebSocket upgrade). */
export function errorBodyJson(status: number, title: string): { contentType: string; body: string } {
  const err = new ApiError(status, TYPE_BY_STATUS[status] ?? "invalid_request", title);
  return { contentType: "application/json; charset=utf-8", body: JSON.stringify(err.toBody()) };
}
