// OpenAPI 3.1 generated from the very route definitions (and schemas) that serve and validate requests.
// What differs between the APIs (error schema, security, body media types) comes in as options.
import * as JSONSchema from "effect/JSONSchema";
import * as Schema from "effect/Schema";
import * as SchemaAST from "effect/SchemaAST";
import type { RouteBase } from "./route.js";

export type Json = Record<string, unknown>;

/** Named sub-schemas (e.g. `Int`) land in components.schemas, so every `$ref` resolves in the document. */
export type Definitions = Record<string, Json>;
const DEFINITION_PATH = "#/components/schemas/";

export function jsonSchema(ast: SchemaAST.AST, defs: Definitions, opts: { allowExtraKeys?: boolean } = {}): Json {
  try {
    return JSONSchema.fromAST(ast, {
      definitions: defs as unknown as Record<string, JSONSchema.JsonSchema7>,
      definitionPath: DEFINITION_PATH,
      target: "openApi3.1",
      additionalPropertiesStrategy: opts.allowExtraKeys ? "allow" : "strict",
    }) as unknown as Json;
  } catch {
    // Transformations without a JSON Schema form (e.g. Buffer bodies) are described loosely.
    return {};
  }
}

/**
 * A parameter's schema, without the `undefined` of optional keys: its decoded form (integer, boolean,
 * enum, array) when `decoded`, else as JSON Schema renders the schema (a transformation's wire side).
 */
function parameterSchema(type: SchemaAST.AST, defs: Definitions, decoded: boolean): Json {
  let ast = type;
  if (SchemaAST.isUnion(ast)) {
    const present = ast.types.filter((t) => !SchemaAST.isUndefinedKeyword(t));
    if (present.length === 1) ast = present[0]!;
  }
  if (!decoded) return jsonSchema(ast, defs);
  const typed = jsonSchema(SchemaAST.typeAST(ast), defs);
  return Object.keys(typed).length > 0 ? typed : jsonSchema(SchemaAST.encodedAST(ast), defs);
}

function fieldsOf(
  schema: Schema.Schema.Any,
  defs: Definitions,
  decoded: boolean,
): Array<{ name: string; optional: boolean; schema: Json }> {
  let ast = schema.ast;
  while (SchemaAST.isTransformation(ast) || SchemaAST.isRefinement(ast)) ast = ast.from;
  if (!SchemaAST.isTypeLiteral(ast)) return [];
  return ast.propertySignatures.map((p) => ({
    name: String(p.name),
    optional: p.isOptional,
    schema: parameterSchema(p.type, defs, decoded),
  }));
}

export interface DocumentOptions<R extends RouteBase<any, any, any>> {
  info: Json;
  servers: Json[];
  /** The error body every error response refers to, stored under `name` in components.schemas. */
  error: { name: string; schema: Schema.Schema.Any };
  /** Media type of JSON request and response bodies. */
  jsonType: string;
  /** Parameters documented in their decoded form (true) or their wire form (false). */
  decodedParameters: boolean;
  /** Error statuses of a route (besides route.errors). */
  errorStatuses: (route: R) => number[];
  errorDescription: (status: number) => string;
  /** A request body's content (media type -> schema); by default JSON of route.body, unknown keys refused. */
  requestContent?: (route: R, defs: Definitions) => Json;
  /** Adds what only this API documents (other success statuses, security) to an operation. */
  extend?: (route: R, op: Json) => void;
  components?: Json;
}

function operation<R extends RouteBase<any, any, any>>(route: R, defs: Definitions, o: DocumentOptions<R>): Json {
  const parameters = [
    ...(route.params
      ? fieldsOf(route.params, defs, o.decodedParameters).map((f) => ({
          name: f.name,
          in: "path",
          required: true,
          schema: f.schema,
        }))
      : []),
    ...(route.query
      ? fieldsOf(route.query, defs, o.decodedParameters).map((f) => ({
          name: f.name,
          in: "query",
          required: !f.optional,
          schema: f.schema,
        }))
      : []),
  ];
  const responses: Json = {
    [String(route.success)]: {
      description: "success",
      ...(route.response
        ? { content: { [route.responseMediaType ?? o.jsonType]: { schema: jsonSchema(route.response.ast, defs) } } }
        : {}),
    },
  };
  const op: Json = {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary ?? route.operationId,
    responses,
  };
  o.extend?.(route, op);
  for (const status of new Set([...o.errorStatuses(route), ...(route.errors ?? [])]))
    responses[String(status)] = {
      description: o.errorDescription(status),
      content: { [o.jsonType]: { schema: { $ref: DEFINITION_PATH + o.error.name } } },
    };
  if (parameters.length) op.parameters = parameters;
  if (route.body)
    op.requestBody = {
      required: true,
      content: o.requestContent?.(route, defs) ?? { [o.jsonType]: { schema: jsonSchema(route.body.ast, defs) } },
    };
  return op;
}

export function buildOpenApi<R extends RouteBase<any, any, any>>(routes: R[], o: DocumentOptions<R>): Json {
  const paths: Record<string, Json> = {};
  const defs: Definitions = {};
  let errorSchema = jsonSchema(o.error.schema.ast, defs);
  // A schema with an identifier comes back as a reference to itself: keep its definition.
  if (typeof errorSchema.$ref === "string" && defs[o.error.name]) errorSchema = defs[o.error.name]!;
  for (const route of routes) {
    if (route.hidden) continue;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, defs, o);
  }
  return {
    openapi: "3.1.0",
    info: o.info,
    servers: o.servers,
    paths,
    components: { schemas: { ...defs, [o.error.name]: errorSchema }, ...o.components },
  };
}
