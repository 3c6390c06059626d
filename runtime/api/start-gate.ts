// The socket's request handler while the agent is still loading: the socket listens before the data path,
// the machines and the Koa app are loaded (runtime/agent-core.ts), so a caller can reach the agent at once.
// GET /api/v1/version needs none of them and is answered now; every other request waits for the command
// API and is then handled by it as usual, or answered 503 if the agent failed to start.
import type http from "node:http";
import { AgentError } from "./agent-errors.js";
import { API_VERSION } from "./version.js";

const JSON_TYPE = "application/json; charset=UTF-8";
const VERSION_PATH = "/api/v1/version";

export class StartGate {
  private app: http.RequestListener | undefined;
  private failed = false;
  private readonly waiting: [http.IncomingMessage, http.ServerResponse][] = [];

  readonly handler: http.RequestListener = (req, res) => {
    if (this.app) return void this.app(req, res);
    if (this.failed) return unavailable(req, res);
    if (req.method === "GET" && (req.url ?? "").split("?")[0] === VERSION_PATH)
      return send(res, 200, { version: API_VERSION });
    // Node keeps reading the body meanwhile into the request stream; Koa reads it when the app takes over.
    this.waiting.push([req, res]);
  };

  /** The command API is loaded: it answers the requests that waited and every later one. */
  open(app: http.RequestListener): void {
    this.app = app;
    for (const [req, res] of this.waiting.splice(0)) app(req, res);
  }

  /** The agent could not start: waiting and later requests get 503 until the socket closes. */
  fail(): void {
    this.failed = true;
    for (const [req, res] of this.waiting.splice(0)) unavailable(req, res);
  }
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": JSON_TYPE, "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

function unavailable(req: http.IncomingMessage, res: http.ServerResponse): void {
  const path = (req.url ?? "/").split("?")[0]!;
  send(res, 503, new AgentError(503, "Service unavailable", "the agent failed to start; see its log").body(path));
}
