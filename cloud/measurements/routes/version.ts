// getVersion (intdash REST API): the measurement API's version, `{version}`. Public, so a client
// can check what it talks to before it has credentials.
import { readFileSync } from "node:fs";
import { Schema } from "effect";
import { defineRoute } from "../../http/route.js";
import { TAG } from "./common.js";

const VERSION: string = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")).version;

export const versionRoute = defineRoute({
  operationId: "getVersion",
  method: "GET",
  path: "/v1/version",
  tag: TAG,
  summary: "Version of the measurement API",
  auth: "none",
  success: 200,
  response: Schema.Struct({ version: Schema.String }),
  handler: () => ({ version: VERSION }),
});
