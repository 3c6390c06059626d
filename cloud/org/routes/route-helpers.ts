// Small helpers shared by the organisation routes.
import type { Principal } from "../../auth/principal.js";
import { Forbidden } from "../../errors.js";
import { parseSort } from "../../http/query.js";
import type { Paging, Sort } from "../repo/sql.js";

export const paging = (q: { page: number; per_page: number }): Paging => ({ page: q.page, perPage: q.per_page });
export const sorting = (q: { sort?: string }, fallback = "name+"): Sort => parseSort(q.sort, fallback);

/** `/users/me/...` operations belong to users; an edge has no own edges, groups or projects. */
export function userOf(p: Principal | undefined): string {
  if (!p || p.kind !== "user") throw new Forbidden("only a user may call this operation");
  return p.uuid;
}
