// The token endpoint without Koa. Client-credentials clients (edges above all) ask for tokens often;
// the Koa stack (routing, authenticators, schema decoding, context objects) costs about as much as
// signing the ES256 token itself. This listener answers `POST /api/auth/oauth2/token` (with or without
// a query) with the same tokenEndpoint() the Koa route uses, and hands every other request to the application.
import type http from "node:http";
import { readRaw } from "../../../lib/http/body.js";
import { errorReply } from "../../http/error-reply.js";
import type { Reply } from "../../http/route.js";
import type { Services } from "../../services.js";
import { noteRoute } from "../../http/request-observer.js";
import { FORM_LIMIT, FORM_TYPE, mediaType, tokenEndpoint, tokenRoute } from "./token.js";
import { invalidRequest } from "../service/errors.js";
import { metadataHeaders, wellKnownDocument } from "./metadata.js";

export const TOKEN_PATH = "/api/auth/oauth2/token";

function send(res: http.ServerResponse, r: Reply): void {
  const body = r.body === undefined ? "" : JSON.stringify(r.body);
  res.writeHead(r.status, {
    ...r.headers,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    "X-Content-Type-Options": "nosniff",
  });
  res.end(body);
}

/** The form fields, and the first field sent more than once (RFC 6749 3.2 forbids repeats). */
async function readForm(req: http.IncomingMessage): Promise<{ form: Record<string, string>; repeated?: string }> {
  const form: Record<string, string> = {};
  let repeated: string | undefined;
  for (const [k, v] of new URLSearchParams((await readRaw(req, FORM_LIMIT)).toString("utf8"))) {
    if (Object.hasOwn(form, k)) repeated ??= k;
    form[k] = v;
  }
  return repeated === undefined ? { form } : { form, repeated };
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, svc: Services): Promise<void> {
  try {
    if (mediaType(req.headers["content-type"]) !== FORM_TYPE) {
      req.resume();
      throw invalidRequest("the body must be application/x-www-form-urlencoded");
    }
    const { form, repeated } = await readForm(req);
    if (repeated !== undefined) throw invalidRequest(`parameter ${repeated} is repeated`);
    send(res, await tokenEndpoint(req, form, svc));
  } catch (err) {
    if (res.headersSent) res.end();
    else send(res, errorReply(err, svc.log, TOKEN_PATH));
  }
}

/** Puts the fast path (and the discovery documents, which live outside /api) in front of the application. */
export function installTokenFastPath(server: http.Server, svc: Services): void {
  const app = server.listeners("request") as Array<(req: http.IncomingMessage, res: http.ServerResponse) => void>;
  server.removeAllListeners("request");
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    // Every POST to the token path, with or without a query string (RFC 6749 3.2 allows one).
    if (req.method === "POST" && (req.url === TOKEN_PATH || req.url?.startsWith(`${TOKEN_PATH}?`))) {
      noteRoute(req, tokenRoute.path);
      void handle(req, res, svc);
      return;
    }
    const document = req.method === "GET" ? wellKnownDocument(req.url, svc) : undefined;
    if (document) {
      noteRoute(req, req.url!);
      res.writeHead(200, metadataHeaders).end(JSON.stringify(document));
      return;
    }
    for (const listener of app) listener.call(server, req, res);
  });
}
