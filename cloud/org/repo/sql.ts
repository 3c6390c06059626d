// Small SQL building blocks shared by the organisation repositories: WHERE clauses from filters,
// ORDER BY from a checked sort key, and one paged query returning rows plus the total count.
import type { Queryable, SqlParam } from "../../database/db.js";
import { parseNameFilter } from "../../http/query.js";

export class Where {
  readonly parts: string[] = [];
  readonly params: SqlParam[] = [];
  add(sql: string, ...params: SqlParam[]) {
    this.parts.push(sql);
    this.params.push(...params);
    return this;
  }
  /** `col IN (...)` for a list, as one JSON parameter (no limit on the number of values). */
  in(col: string, values: readonly string[] | undefined) {
    if (values !== undefined) this.add(`${col} IN (SELECT value FROM json_each(?))`, JSON.stringify(values));
    return this;
  }
  /** Name-like filters: any of the values matches; "quoted" is exact, plain is a partial match. */
  names(col: string, values: readonly string[] | undefined) {
    if (!values?.length) return this;
    const ors: string[] = [];
    for (const v of values) {
      const f = parseNameFilter(v);
      if (f.exact) {
        ors.push(`${col} = ?`);
        this.params.push(f.value);
      } else {
        ors.push(`${col} LIKE ? ESCAPE '\\'`);
        this.params.push(`%${f.value.replace(/[\\%_]/g, (c) => "\\" + c)}%`);
      }
    }
    this.parts.push(`(${ors.join(" OR ")})`);
    return this;
  }
  sql() {
    return this.parts.length ? ` WHERE ${this.parts.join(" AND ")}` : "";
  }
}

export interface Paging {
  page: number;
  perPage: number;
}

export interface Sort {
  key: string;
  desc: boolean;
}

/** Keys are checked against an allow-list before reaching SQL. */
export function orderBy(sort: Sort, columns: Record<string, string>, tieBreak: string): string {
  const col = columns[sort.key] ?? Object.values(columns)[0]!;
  const dir = sort.desc ? "DESC" : "ASC";
  return ` ORDER BY ${col} ${dir}, ${tieBreak} ${dir}`;
}

export async function pagedQuery<T>(
  db: Queryable,
  from: string,
  columns: string,
  where: Where,
  order: string,
  paging: Paging,
): Promise<{ rows: T[]; total: number }> {
  const total = (await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${from}${where.sql()}`, where.params))?.n ?? 0;
  const rows = await db.all<T>(`SELECT ${columns} FROM ${from}${where.sql()}${order} LIMIT ? OFFSET ?`, [
    ...where.params,
    paging.perPage,
    (paging.page - 1) * paging.perPage,
  ]);
  return { rows, total };
}
