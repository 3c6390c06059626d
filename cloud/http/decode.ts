// Decoding of every input through effect/Schema. Keys of JSON objects match case-insensitively
// (the spec: `Username` == `username`); unknown keys are refused in JSON bodies and dropped elsewhere
// (query, path, form bodies); failures become 400s naming the fields, never echoing a value.
import * as Schema from "effect/Schema";
import * as SchemaAST from "effect/SchemaAST";
import { decodeInput, type Issue } from "../../lib/http/decode.js";
import { Invalid } from "../errors.js";

const fieldNamesCache = new WeakMap<object, Map<string, string>>();

function fieldNames(schema: Schema.Schema.Any): Map<string, string> | undefined {
  const cached = fieldNamesCache.get(schema);
  if (cached) return cached;
  let ast = schema.ast;
  while (SchemaAST.isTransformation(ast) || SchemaAST.isRefinement(ast))
    ast = SchemaAST.isTransformation(ast) ? ast.from : ast.from;
  if (!SchemaAST.isTypeLiteral(ast)) return undefined;
  const map = new Map<string, string>();
  for (const p of ast.propertySignatures) if (typeof p.name === "string") map.set(p.name.toLowerCase(), p.name);
  fieldNamesCache.set(schema, map);
  return map;
}

/** Renames keys of a plain object to the schema's spelling, ignoring case. */
export function normaliseKeys(schema: Schema.Schema.Any, input: unknown): unknown {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return input;
  const names = fieldNames(schema);
  if (!names) return input;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    const canonical = names.get(k.toLowerCase());
    if (canonical !== undefined && !(canonical in out && canonical !== k)) out[canonical] = v;
  }
  return out;
}

/** Top-level keys of a plain object that the schema does not know (in any case). */
function unknownKeys(schema: Schema.Schema.Any, input: unknown): string[] {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return [];
  const names = fieldNames(schema);
  return names ? Object.keys(input).filter((k) => !names.has(k.toLowerCase())) : [];
}

/** The rule only: effect's messages quote what was sent (`actual "short"`), a password for example. */
const withoutValue = (message: string) =>
  message
    .replace(/, actual [\s\S]*$/, "")
    .replace(/^Unable to decode [\s\S]* into (an? [^"]*)$/, "cannot be decoded into $1");

export function formatIssues(issues: Issue[]): Record<string, string> {
  const props: Record<string, string> = {};
  for (const issue of issues) {
    const key = issue.path.length ? issue.path.join(".") : "body";
    if (!(key in props)) props[key] = withoutValue(issue.message);
  }
  return props;
}

export interface DecodeOptions {
  /** A key the schema does not know is a 400 naming it (JSON bodies), instead of being dropped. */
  refuseUnknown?: boolean;
}

export function decodeOrThrow<A, I>(
  schema: Schema.Schema<A, I, never>,
  input: unknown,
  what: string,
  opts: DecodeOptions = {},
): A {
  if (opts.refuseUnknown) {
    // Names are cut short and few: a client's key may be anything, even megabytes long.
    const unknown = unknownKeys(schema, input)
      .slice(0, 10)
      .map((k) => (k.length > 64 ? `${k.slice(0, 64)}…` : k));
    if (unknown.length > 0)
      throw new Invalid(
        `invalid ${what}: unknown field${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}`,
        Object.fromEntries(unknown.map((k) => [k, "is not a known field"])),
      );
  }
  const result = decodeInput(schema, normaliseKeys(schema, input), opts.refuseUnknown ? "error" : "ignore");
  if (result.ok) return result.value;
  const properties = formatIssues(result.issues);
  const [first] = Object.entries(properties);
  throw new Invalid(first ? `invalid ${what}: ${first[0]}: ${first[1]}` : `invalid ${what}`, properties);
}
