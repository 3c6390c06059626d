// Problems the kit itself finds (no route, wrong method, body too large or not JSON). They carry the
// HTTP facts only; each API's error renderer turns them into its own error body.

export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** No route has this path. */
export class NoRoute extends HttpProblem {
  constructor(
    readonly method: string,
    readonly path: string,
  ) {
    super(404, `no API at ${method} ${path}`);
  }
}

/** Routes have this path, but none this method; `allowed` goes in the Allow header. */
export class MethodNotAllowed extends HttpProblem {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly allowed: string[],
  ) {
    super(405, `method ${method} is not allowed on ${path}`, { Allow: allowed.join(", ") });
  }
}

export class BodyTooLarge extends HttpProblem {
  constructor(readonly limit: number) {
    super(413, `request body exceeds ${limit} bytes`);
  }
}

export class BodyNotJson extends HttpProblem {
  constructor() {
    super(400, "request body is not valid JSON");
  }
}

/** The client closed the connection before the body was complete. */
export class BodyCutShort extends HttpProblem {
  constructor() {
    super(400, "the request body was cut short");
  }
}
