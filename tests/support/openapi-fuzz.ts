// Schema-shaped bad requests from an OpenAPI 3.1 document, reproducible from a seed: for each operation, path and
// query parameters and a body built from their schemas, then bent (wrong types, out-of-range numbers and times,
// over-long and odd strings, extra and missing fields, deep nesting). What a careless or hostile client sends.

type Json = Record<string, any>;

/** mulberry32: a small seeded generator, so a failing case can be run again from its seed. */
export function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof seeded>;

const ODD_STRINGS = [
  "",
  " ",
  "x".repeat(5000),
  "%00",
  "\u0000",
  "../../etc/passwd",
  "'; DROP TABLE users; --",
  "\ud800",
  "😀".repeat(50),
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "not-a-uuid",
  "{}",
  "[]",
  "null",
  "-1",
  "1e309",
];
const ODD_TIMES = [
  "9223372036854775807",
  "-9223372036854775808",
  "0000-01-01T00:00:00Z",
  "0099-12-31T23:59:59Z",
  "9999-12-31T23:59:60Z",
  "2026-02-30T00:00:00Z",
  "1970-01-01T00:00:00+25:00",
  "-1",
];
// biome-ignore lint/correctness/noPrecisionLoss: a number past 2^53 is one of the odd values sent
const ODD_NUMBERS = [-1, 0, 2 ** 53, -(2 ** 63), 1e308, 0.5, -0.0, 4294967296, 9007199254740993];

function randomUuid(rng: Rng): string {
  const hex = () => rng.int(16).toString(16);
  return "xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx".replace(/x/g, hex);
}

function resolve(doc: Json, schema: Json | undefined): Json {
  let s = schema ?? {};
  for (let i = 0; i < 10 && typeof s.$ref === "string"; i++)
    s =
      s.$ref
        .split("/")
        .slice(1)
        .reduce((o: Json, k: string) => o?.[k], doc) ?? {};
  return s;
}

/**
 * A value of the schema's shape, each part bent with probability `bend`: a request mostly well-formed reaches the
 * code past its first checks, where a single bad field does its harm.
 */
// biome-ignore lint/suspicious/noShadowRestrictedNames: a module function, never called on an object
export function valueOf(doc: Json, schema: Json | undefined, rng: Rng, bend: number, depth = 0): unknown {
  const s = resolve(doc, schema);
  if (rng.chance(bend)) return bent(rng, depth);
  const variants = s.anyOf ?? s.oneOf;
  if (Array.isArray(variants) && variants.length) return valueOf(doc, rng.pick(variants), rng, bend, depth + 1);
  if (Array.isArray(s.enum)) return rng.chance(0.7) ? rng.pick(s.enum) : rng.pick(ODD_STRINGS);
  if (s.const !== undefined) return s.const;
  switch (Array.isArray(s.type) ? rng.pick(s.type) : s.type) {
    case "object": {
      const out: Json = {};
      const required = new Set((s.required ?? []) as string[]);
      for (const [k, v] of Object.entries((s.properties ?? {}) as Json))
        if (required.has(k) ? !rng.chance(bend) : rng.chance(0.6))
          out[k] = valueOf(doc, v as Json, rng, bend, depth + 1);
      if (rng.chance(0.2)) out[rng.pick(["extra", "__proto__", "constructor", "A".repeat(300)])] = bent(rng, depth);
      return out;
    }
    case "array":
      // A long array once per body: long arrays inside long arrays (panels of series) make bodies of tens of
      // megabytes, refused for their size before their shape is ever read.
      return Array.from({ length: rng.pick([0, 1, 3, depth > 2 ? 10 : 1000]) }, () =>
        valueOf(doc, s.items, rng, bend, depth + 1),
      );
    case "integer":
    case "number":
      if (rng.chance(0.3)) return rng.pick(ODD_NUMBERS);
      return Math.min(s.maximum ?? Infinity, (s.minimum ?? 0) + rng.int(100));
    case "boolean":
      return rng.chance(0.8) ? rng.chance(0.5) : "yes";
    case "string":
      if (s.format === "date-time") return rng.chance(0.6) ? rng.pick(ODD_TIMES) : "2026-01-02T03:04:05.123456789Z";
      if (s.format === "uuid" || String(s.pattern ?? "").includes("{8}-"))
        return rng.chance(0.9) ? randomUuid(rng) : rng.pick(ODD_STRINGS);
      return rng.chance(0.8) ? `s${rng.int(1000)}` : rng.pick(ODD_STRINGS);
    default:
      return bent(rng, depth);
  }
}

/** A value of no particular shape, deeply nested now and then. */
function bent(rng: Rng, depth: number): unknown {
  switch (rng.int(7)) {
    case 0:
      return null;
    case 1:
      return rng.pick(ODD_NUMBERS);
    case 2:
      return rng.pick(ODD_STRINGS);
    case 3:
      return rng.pick(ODD_TIMES);
    case 4:
      return depth < 3 ? { a: bent(rng, depth + 1), b: [bent(rng, depth + 1)] } : {};
    case 5:
      return JSON.parse(`${"[".repeat(2000)}${"]".repeat(2000)}`);
    default:
      return [true, "x", 1];
  }
}

/** A parameter's text in a path or a query. */
function text(v: unknown): string {
  return typeof v === "string" ? v : (JSON.stringify(v) ?? "");
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** One bent request for an operation of the document (path relative to the server's /api). */
export function requestFor(doc: Json, path: string, method: string, rng: Rng): FuzzRequest {
  const op = doc.paths[path][method] as Json;
  const params = [...((doc.paths[path].parameters ?? []) as Json[]), ...((op.parameters ?? []) as Json[])].map((p) =>
    resolve(doc, p),
  );
  let url = path;
  const query = new URLSearchParams();
  const bend = rng.pick([0.02, 0.1, 0.3]);
  for (const p of params) {
    const value = text(valueOf(doc, p.schema, rng, bend));
    // A lone surrogate has no UTF-8 form to percent-encode: it goes as U+FFFD, as a browser would send it.
    if (p.in === "path")
      url = url.replace(
        `{${p.name}}`,
        encodeURIComponent(value.replace(/[\ud800-\udfff]/g, "\ufffd")).slice(0, 2000) || "x",
      );
    else if (p.in === "query" && (p.required || rng.chance(0.35))) query.append(p.name, value.slice(0, 2000));
  }
  if (rng.chance(0.1)) query.append(rng.pick(["limit", "page", "sort", "zzz"]), rng.pick(ODD_STRINGS).slice(0, 100));
  const qs = query.toString();
  const req: FuzzRequest = { method: method.toUpperCase(), path: qs ? `${url}?${qs}` : url, headers: {} };
  const content = (op.requestBody?.content ?? {}) as Json;
  const [type] = Object.keys(content);
  if (type) {
    const value = valueOf(doc, content[type].schema, rng, bend);
    if (type.includes("form")) {
      req.body = new URLSearchParams(
        Object.entries(typeof value === "object" && value !== null ? value : { v: value }).map(([k, v]) => [
          k,
          text(v),
        ]),
      ).toString();
    } else if (type.includes("json")) {
      req.body = rng.chance(0.05) ? "{" : JSON.stringify(value);
    } else {
      req.body = rng.pick(["", "\u0000\u0001garbage", "x".repeat(10_000)]);
    }
    req.headers["content-type"] = rng.chance(0.9)
      ? type
      : rng.pick(["text/plain", "application/json", "application/x-www-form-urlencoded"]);
  }
  return req;
}
