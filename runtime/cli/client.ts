// A tiny HTTP client for the command API over its Unix socket (used by agentctl and the tests).
import http from "node:http";

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: http.IncomingHttpHeaders;
}

export interface ApiProblem {
  title: string;
  status: number;
  detail: string;
  instance: string;
}

export class ApiClient {
  constructor(
    readonly socketPath: string,
    readonly base = "/api/v1",
  ) {}

  request<T = unknown>(method: string, path: string, body?: unknown, rawBody?: string): Promise<ApiResponse<T>> {
    const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          socketPath: this.socketPath,
          method,
          path: this.base + path,
          headers: {
            host: "unix",
            accept: "application/json",
            ...(payload !== undefined
              ? { "content-type": "application/json; charset=UTF-8", "content-length": Buffer.byteLength(payload) }
              : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = text;
            try {
              parsed = text === "" ? undefined : JSON.parse(text);
            } catch {
              // not JSON: keep the text
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T, headers: res.headers });
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  get<T = unknown>(path: string) {
    return this.request<T>("GET", path);
  }
  post<T = unknown>(path: string, body?: unknown) {
    return this.request<T>("POST", path, body);
  }
  patch<T = unknown>(path: string, body: unknown) {
    return this.request<T>("PATCH", path, body);
  }
  delete<T = unknown>(path: string) {
    return this.request<T>("DELETE", path);
  }
}
