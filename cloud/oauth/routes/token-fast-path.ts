// The token endpoint without Koa. Client-credentials clients (edges above all) ask for tokens often;
// the Koa stack (routing, authenticators, schema decoding, context objects) costs about as much as
// signing the ES256 token itself. These fast paths run before routing (cloud/http/pre-routing.ts) for
// every spelling the router gives to the token route, with the route's own form reader and endpoint.
import { API_PREFIX } from "../../http/mount.js";
import { sendJson, type FastPath } from "../../http/pre-routing.js";
import { reply } from "../../http/route.js";
import { tokenEndpoint, tokenRoute } from "./token.js";
import { readTokenForm } from "./token-form.js";
import { authorizationServerMetadata, METADATA_PATH, metadataHeaders } from "./metadata.js";

export const tokenFastPath: FastPath = {
  method: tokenRoute.method as "POST",
  prefix: API_PREFIX,
  path: tokenRoute.path,
  async handle(req, res, { svc }) {
    sendJson(res, await tokenEndpoint(req, await readTokenForm(req), svc));
  },
};

/** RFC 8414 metadata lives outside /api (the issuer is the public URL), so no route of the API takes it. */
export const metadataFastPath: FastPath = {
  method: "GET",
  path: METADATA_PATH,
  handle(_req, res, { svc }) {
    const { "Content-Type": contentType, ...headers } = metadataHeaders;
    sendJson(res, reply(200, authorizationServerMetadata(svc), headers, contentType));
  },
};
