// getVersion (routes.md section 2): the measurement API's version, `{version}`. Public, so a client
// can check what it talks to before it has credentials.
import { Schema } from "effect";
import { PACKAGE_VERSION } from "../../../lib/package-paths.js";
import { defineRoute } from "../../http/route.js";
import { TAG } from "./common.js";

export const versionRoute = defineRoute({
  operationId: "getVersion",
  method: "GET",
  path: "/v1/version",
  tag: TAG,
  summary: "Version of the measurement API",
  auth: "none",
  success: 200,
  response: Schema.Struct({ version: Schema.String }),
  handler: () => ({ version: PACKAGE_VERSION }),
});
