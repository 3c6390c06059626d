// The token endpoint without Koa. Client-credentials clients (edges above all) ask for tokens often;
// the Koa stack (routing, authenticators, schema decoding, context objects) costs about as much as
// signing the ES256 token itself. This listener answers `POST /api/auth/oauth2/token` (with or without
// a query) with the same tokenEndpoint() the Koa route uses, and hands every other request to the application.
import type http from "node:http";
import { ApiError } from "../../http/errors.js";
import type { Reply } from "../../http/route.js";
import type { Services } from "../../services.js";
import { noteRoute } from "../../http/request-observer.js";
import { FORM_LIMIT, FORM_TYPE, mediaType, tokenEndpoint, tokenRoute } from "./token.js";
import { invalidRequest } from "../service/errors.js";
import { authorizationServerMetadata, METADATA_PATH, metadataHeaders } from "./metadata.js";

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
function readForm(req: http.IncomingMessage): Promise<{ form: Record<string, string>; repeated?: string }> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > FORM_LIMIT) return reject(new ApiError(413, "payload_too_large", `request body exceeds ${FORM_LIMIT} bytes`));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > FORM_LIMIT) {
        req.removeAllListeners("data");
        req.resume();
        reject(new ApiError(413, "payload_too_large", `request body exceeds ${FORM_LIMIT} bytes`));
      } else chunks.push(c);
    });
    req.once("end", () => {
      const form: Record<string, string> = {};
      let repeated: string | undefined;
      for (const [k, v] of new URLSearchParams(Buffer.concat(chunks).toString("utf8"))) {
        if (Object.hasOwn(form, k)) repeated ??= k;
        form[k] = v;
      }
      resolve(repeated === undefined ? { form } : { form, repeated });
    });
    req.once("error", reject);
    // An aborted upload never ends: settle anyway so nothing waits forever.
    req.once("close", () => {
      if (!req.complete) reject(new ApiError(400, "invalid_request", "the request body was cut short"));
    });
  });
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, svc: Services): Promise<void> {
  try {
    if (mediaType(req.headers["content-type"]) !== FORM_TYPE) {
      req.resume();
      return send(res, invalidRequest("the body must be application/x-www-form-urlencoded").toReply());
    }
    const { form, repeated } = await readForm(req);
    if (repeated !== undefined) return send(res, invalidRequest(`parameter ${repeated} is repeated`).toReply());
    send(res, await tokenEndpoint(req, form, svc));
  } catch (err) {
    if (err instanceof ApiError) {
      res.writeHead(err.status, { "Content-Type": "application/json; charset=utf-8", ...err.headers });
      res.end(JSON.stringify(err.toBody()));
      return;
    }
    svc.log.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, "token endpoint failed");
    if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json; charset=utf-8" });
    res.end(JSON.stringify({ type: "internal_error", title: "unexpected server error" }));
  }
}

/** Puts the fast path (and the RFC 8414 metadata, which lives outside /api) in front of the application. */
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
    if (req.method === "GET" && req.url === METADATA_PATH) {
      noteRoute(req, METADATA_PATH);
      res.writeHead(200, metadataHeaders).end(JSON.stringify(authorizationServerMetadata(svc)));
      return;
    }
    for (const listener of app) listener.call(server, req, res);
  });
}
