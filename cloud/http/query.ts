// Query-string schemas shared by list operations: paging, sorting, repeated `x[]` filters and
// name-like filters (plain string = partial match, "double-quoted" = exact match).
import * as Schema from "effect/Schema";

export const IntFromQuery = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(min, max));

export const BoolFromQuery = Schema.transform(Schema.Literal("true", "false"), Schema.Boolean, {
  strict: true,
  decode: (s) => s === "true",
  encode: (b) => (b ? "true" : "false"),
});

export const DateTimeFromQuery = Schema.String.pipe(
  Schema.filter((s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)), {
    message: () => "expected an RFC 3339 date-time",
  }),
);

/** A repeated filter `x[]=a&x[]=b`; the field key includes the brackets, as in the real API. */
export const StringArrayQuery = Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(1024))));

export const PageFields = {
  page: Schema.optionalWith(IntFromQuery(1).annotations({ default: 1 }), { default: () => 1 }),
  per_page: Schema.optionalWith(IntFromQuery(1, 200).annotations({ default: 30 }), { default: () => 30 }),
};

export const sortQuery = <K extends string>(keys: readonly K[]) =>
  Schema.optional(
    Schema.Literal(...keys.flatMap((k) => [k, `${k}+`, `${k}-`] as const)).annotations({
      description: "sort key; suffix + ascending (default), - descending",
    }),
  );

/**
 * Lists sent as a repeated key without brackets: intdash's data_id_filter, which generated clients
 * send as `data_id_filter=a&data_id_filter=b`.
 */
const REPEATED_KEYS = new Set(["data_id_filter"]);

/** Koa gives `string | string[]`; keys ending in [] always become arrays, others keep their first value. */
export function normaliseQuery(query: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    if (k.endsWith("[]") || REPEATED_KEYS.has(k)) out[k] = Array.isArray(v) ? v : [v];
    else out[k] = Array.isArray(v) ? v[0] : v;
  }
  // An unencoded `+` in `sort=name+` arrives as a space: restore it.
  if (typeof out.sort === "string") out.sort = out.sort.replace(/ $/, "+");
  return out;
}

export interface SortSpec {
  key: string;
  desc: boolean;
}

export function parseSort(sort: string | undefined, fallback: string): SortSpec {
  const s = sort ?? fallback;
  if (s.endsWith("-")) return { key: s.slice(0, -1), desc: true };
  return { key: s.endsWith("+") ? s.slice(0, -1) : s, desc: false };
}

export interface NameMatch {
  exact: boolean;
  value: string;
}

export function parseNameFilter(v: string): NameMatch {
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) return { exact: true, value: v.slice(1, -1) };
  return { exact: false, value: v };
}

export interface PageInfo {
  next: boolean;
  prev: boolean;
  next_page?: number;
  prev_page?: number;
  total_page: number;
  total_count: number;
}

export function pageInfo(totalCount: number, page: number, perPage: number): PageInfo {
  const totalPage = Math.max(1, Math.ceil(totalCount / perPage));
  const info: PageInfo = { next: page < totalPage, prev: page > 1, total_page: totalPage, total_count: totalCount };
  if (info.next) info.next_page = page + 1;
  if (info.prev) info.prev_page = Math.min(page - 1, totalPage);
  return info;
}

export const PageInfoSchema = Schema.Struct({
  next: Schema.Boolean,
  prev: Schema.Boolean,
  next_page: Schema.optional(Schema.Int),
  prev_page: Schema.optional(Schema.Int),
  total_page: Schema.Int,
  total_count: Schema.Int,
});

export const listOf = <A, I>(item: Schema.Schema<A, I>) =>
  Schema.Struct({ items: Schema.Array(item), page: PageInfoSchema });
