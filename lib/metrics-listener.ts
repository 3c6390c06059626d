// A listener of its own for Prometheus scrapes (`--metrics-listen host:port` of both ends): `GET /metrics`
// and nothing else, to anyone who reaches the address (bind it to an internal interface). Each end passes
// its error shape for other requests.
import http from "node:http";

export const METRICS_PATH = "/metrics";

export interface MetricsListenerOptions {
  host: string;
  port: number;
  /** The exposition text and its content type, at each scrape. */
  expose: () => Promise<{ contentType: string; body: string }>;
  /** The error answer (status and title) in the caller's API shape. */
  refusal: (status: number, title: string, path: string) => { contentType: string; body: string };
}

export interface MetricsListener {
  /** `http://host:port/metrics` */
  url: string;
  close(): Promise<void>;
}

export async function startMetricsListener(o: MetricsListenerOptions): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0]!;
    const refuse = (status: number, title: string, headers: Record<string, string> = {}) => {
      const e = o.refusal(status, title, path);
      res.writeHead(status, { "Content-Type": e.contentType, ...headers }).end(e.body);
    };
    if (path !== METRICS_PATH) return refuse(404, `only GET ${METRICS_PATH} is served here`);
    if (req.method !== "GET" && req.method !== "HEAD")
      return refuse(405, `method ${req.method} is not allowed here`, { Allow: "GET" });
    o.expose().then(
      ({ contentType, body }) =>
        res
          .writeHead(200, { "Content-Type": contentType, "Cache-Control": "no-store" })
          .end(req.method === "HEAD" ? undefined : body),
      () => refuse(500, "collecting the metrics failed"),
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const addr = server.address() as { port: number; address: string };
  const shown = addr.address.includes(":") ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${shown}:${addr.port}${METRICS_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
