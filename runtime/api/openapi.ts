// The command API's OpenAPI document: the kit's builder with the `{title, status, detail, instance}`
// error body; request bodies refuse unknown keys, as decoding does.
import { buildOpenApi as buildDocument, type Json } from "../../lib/http/openapi.js";
import { API_VERSION, ErrorBody } from "../settings/schemas.js";
import type { AnyRoute } from "./route.js";

export const JSON_TYPE = "application/json; charset=UTF-8";

const ERROR_DESCRIPTIONS: Record<number, string> = { 404: "Resource is not found", 409: "conflict" };

export function buildOpenApi(routes: AnyRoute[], basePath: string): Json {
  return buildDocument(routes, {
    info: {
      title: "Edge agent command API",
      version: API_VERSION,
      description:
        "Local command API of the edge agent, served over a Unix domain socket (base URL http://unix/api/v1).",
    },
    servers: [{ url: `http://unix${basePath}` }],
    error: { name: "Error", schema: ErrorBody },
    jsonType: JSON_TYPE,
    decodedParameters: false,
    errorStatuses: () => [400],
    errorDescription: (status) => ERROR_DESCRIPTIONS[status] ?? "invalid request",
  });
}
