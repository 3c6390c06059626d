// The one place a cloud error becomes an answer: status, `{type, title}` body (with `properties` where
// fields were invalid) and headers. The Koa application and the token fast path both call errorReply.
import type { Logger } from "pino";
import { HttpProblem, MethodNotAllowed } from "../../lib/http/problems.js";
import { isStorageFull } from "../storage/db.js";
import { ApiError, storageFull, type ErrorType } from "./errors.js";
import { JSON_TYPE, Reply } from "./route.js";

const KIT_TYPES: Record<number, ErrorType> = { 400: "invalid_request", 404: "not_found", 405: "method_not_allowed", 413: "payload_too_large" };

function apiErrorOf(err: unknown, log: Logger, path: string): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof MethodNotAllowed) return new ApiError(405, "method_not_allowed", `method ${err.method} is not allowed here`, undefined, err.headers);
  if (err instanceof HttpProblem) return new ApiError(err.status, KIT_TYPES[err.status] ?? "invalid_request", err.message, undefined, err.headers);
  if (isClientError(err)) return new ApiError(err.status, "invalid_request", err.expose ? err.message : "bad request");
  if (isStorageFull(err)) {
    log.error({ err: (err as Error).message, path }, "storage full");
    return storageFull();
  }
  log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack }, path }, "unhandled error");
  return new ApiError(500, "internal_error", "unexpected server error");
}

const isClientError = (err: unknown): err is { status: number; expose: boolean; message: string } =>
  typeof err === "object" && err !== null && typeof (err as { status?: unknown }).status === "number" &&
  (err as { status: number }).status >= 400 && (err as { status: number }).status < 500;

/** Maps anything thrown while answering `path` to its reply; server faults are logged here. */
export function errorReply(err: unknown, log: Logger, path: string): Reply {
  const e = apiErrorOf(err, log, path);
  return new Reply(e.status, e.toBody(), e.headers ?? {}, JSON_TYPE);
}
