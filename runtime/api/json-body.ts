// Reading a request body as JSON, refusing what the schemas cannot safely handle: bodies over 1 MiB,
// nesting deeper than any setting needs (formatting the decode error of a 100 000-deep array overflows
// the stack), and strings with lone UTF-16 surrogates (LMDB stores strings as UTF-8, so such an id
// would be stored as something else and could never be read or deleted by the id it was created with).
import type { Context } from "koa";
import { readRaw } from "../../lib/http/body.js";
import { badRequest } from "./agent-errors.js";

export const BODY_LIMIT = 1024 * 1024;
/** The deepest body (a downstream: {filters: [{data_filters: [{…}]}]}) nests 5 levels; 32 leaves room. */
export const MAX_DEPTH = 32;

/** The deepest nesting of arrays and objects in JSON text (strings skipped). */
function depthOf(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The path (`launch.args[1]`) of the first string or key that is not well-formed Unicode. */
function malformedAt(v: unknown, path: string): string | undefined {
  if (typeof v === "string") return LONE_SURROGATE.test(v) ? path : undefined;
  if (v === null || typeof v !== "object") return undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const bad = malformedAt(v[i], `${path}[${i}]`);
      if (bad !== undefined) return bad;
    }
    return undefined;
  }
  for (const [k, x] of Object.entries(v)) {
    if (LONE_SURROGATE.test(k)) return path;
    const bad = malformedAt(x, path === "body" ? k : `${path}.${k}`);
    if (bad !== undefined) return bad;
  }
  return undefined;
}

export async function readJson(ctx: Context): Promise<unknown> {
  const text = (await readRaw(ctx.req, BODY_LIMIT)).toString("utf8");
  if (text.trim() === "") return {};
  if (depthOf(text) > MAX_DEPTH) throw badRequest(`body: nested deeper than ${MAX_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest("body: not valid JSON");
  }
  const bad = malformedAt(value, "body");
  if (bad !== undefined) throw badRequest(`${bad}: not well-formed Unicode (a lone UTF-16 surrogate escape)`);
  return value;
}
