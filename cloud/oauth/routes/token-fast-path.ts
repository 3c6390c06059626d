// The token endpoint without Koa. Client-credentials clients (edges above all) ask for tokens often;
// the Koa stack (routing, authenticators, schema decoding, context objects) costs about as much as
// signing the ES256 token itself. These fast paths run before routing (cloud/http/pre-routing.ts) for
// every spelling the router gives to the token route, with the route's own form reader and endpoint.
import { API_PREFIX } from "../../http/mount.js";
import { sendJson, type FastPath } from "../../http/pre-routing.js";
import { reply } from "../../http/route.js";
import { tokenEndpoint, tokenRoute } from "./token.js";
import { readTokenForm } from "./token-form.js";
import {
  authorizationServerMetadata,
  METADATA_PATH,
  metadataHeaders,
  OPENID_PATH,
  openIdConfiguration,
} from "./metadata.js";

export const tokenFastPath: FastPath = {
  method: tokenRoute.method as "POST",
  prefix: API_PREFIX,
  path: tokenRoute.path,
  async handle(req, res, { svc }) {
    sendJson(res, await tokenEndpoint(req, await readTokenForm(req), svc));
  },
};

/** The discovery documents live outside /api (the issuer is the public URL), so no route of the API takes them. */
function wellKnown(path: string, document: typeof authorizationServerMetadata): FastPath {
  return {
    method: "GET",
    path,
    handle(_req, res, { svc }) {
      const { "Content-Type": contentType, ...headers } = metadataHeaders;
      sendJson(res, reply(200, document(svc), headers, contentType));
    },
  };
}

/** RFC 8414 metadata. */
export const metadataFastPath = wellKnown(METADATA_PATH, authorizationServerMetadata);
/** OpenID Connect Discovery 1.0: the same, with the fields OpenID requires. */
export const openIdFastPath = wellKnown(OPENID_PATH, openIdConfiguration);
