// getVersion: `{version}` is the intdash API version whose REST paths the peer follows, so intdash
// clients that compare it (the Python SDK 2.1 warns below 1.9.0) see what they talk to;
// `cloud_peer_version` is this package's own version. Public, so a client can check before it has credentials.
import * as Schema from "effect/Schema";
import { PACKAGE_VERSION } from "../../../lib/package-paths.js";
import { defineRoute } from "../../http/route.js";
import { TAG } from "./dual-route.js";

/** The intdash API document (v2.6.0) whose paths, operations and shapes the REST API implements. */
export const INTDASH_API_VERSION = "2.6.0";

export const versionRoute = defineRoute({
  operationId: "getVersion",
  method: "GET",
  path: "/v1/version",
  tag: TAG,
  summary: "Version of the intdash API the peer follows, and of the cloud peer",
  auth: "none",
  success: 200,
  response: Schema.Struct({ version: Schema.String, cloud_peer_version: Schema.String }),
  handler: () => ({ version: INTDASH_API_VERSION, cloud_peer_version: PACKAGE_VERSION }),
});
