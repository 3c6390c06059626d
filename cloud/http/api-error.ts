// Errors that are HTTP facts rather than domain outcomes (an unsupported media type), thrown by routes.
// Like domain errors (cloud/errors.ts) they are rendered by http/error-reply.ts.
import type { ErrorType } from "../errors.js";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly title: string,
    readonly headers?: Record<string, string>,
    /** Fields (or checks) at fault, by name. */
    readonly properties?: Record<string, string>,
  ) {
    super(title);
  }
}
