// Domain errors: what went wrong, in the intdash API's terms (`type` and `title`), without HTTP.
// Services throw these; cloud/http/error-reply.ts alone decides the status and renders the body.

/** The intdash error `type`s the cloud answers with. */
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

export abstract class DomainError extends Error {
  constructor(
    readonly type: ErrorType,
    readonly title: string,
    /** Invalid or conflicting fields, by name. */
    readonly properties?: Record<string, string>,
  ) {
    super(title);
  }
}

/** The request is malformed or breaks a rule. */
export class Invalid extends DomainError {
  constructor(title: string, properties?: Record<string, string>) {
    super("invalid_request", title, properties);
  }
}

/** No caller is known, or the credentials are invalid. */
export class Unauthenticated extends DomainError {
  constructor(title = "authentication required") {
    super("unauthorized", title);
  }
}

/** The caller is known but may not do this (or a limit of the organisation is reached). */
export class Forbidden extends DomainError {
  constructor(
    title = "access denied",
    type: "forbidden" | "exceeded_max_groups_count" | "exceeded_max_projects_count_per_group" = "forbidden",
  ) {
    super(type, title);
  }
}

export class NotFound extends DomainError {
  constructor(title = "resource not found") {
    super("not_found", title);
  }
}

/** The request contradicts what is stored (a duplicate name, a resource still in use). */
export class Conflict extends DomainError {
  constructor(
    title: string,
    properties?: Record<string, string>,
    type: "conflict" | "conflict_project_edge_uuid" | "conflict_project_edge_nickname" = "conflict",
  ) {
    super(type, title, properties);
  }
}
