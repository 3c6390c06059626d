// Errors of the command API, rendered as `{title, status, detail, instance}` (instance = request path).
export class AgentError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  body(instance: string): { title: string; status: number; detail: string; instance: string } {
    return { title: this.title, status: this.status, detail: this.detail, instance };
  }
}

export const NOT_FOUND_TITLE = "Resource is not found";
export const badRequest = (detail: string) => new AgentError(400, "Bad request", detail);
export const notFound = (detail: string) => new AgentError(404, NOT_FOUND_TITLE, detail);
export const conflict = (detail: string) => new AgentError(409, "Conflict", detail);
