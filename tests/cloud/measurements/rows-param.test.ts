// A commit's rows travel as one parameter per column (repo/chunk-batch.ts rowsParam): on PostgreSQL an array
// literal written by hand. Whatever a data name holds (quotes, backslashes, commas, braces, spaces, the word
// NULL, nothing at all) and whatever a number is (0, negative, beyond 32 bits, absent), it must come back as it was.
import { describe, expect, it } from "vitest";
import { rowsParam } from "../../../cloud/measurements/repo/chunk-batch.js";
import { DIRECT_COMMIT, withPeer } from "./helpers.js";

const ROWS: Array<[string, number | null]> = [
  ['a "quoted" name', 1],
  ['back\\slash \\" both', -2],
  ["{braces},commas", 2 ** 53 - 1],
  ["  spaces  ", 0],
  ["NULL", null],
  ["", 9_223_372_036_854],
  ["ü 日本 \t tab\nline", 42],
];

describe("measurements: a commit's rows as parameters", () => {
  const t = withPeer(DIRECT_COMMIT);

  it("gives back every text and number as it was, in order", async () => {
    const db = t.peer.svc.db;
    const params = rowsParam(db, ROWS, 2);
    const sql =
      db.dialect === "postgres"
        ? "SELECT v.t AS t, v.n AS n FROM unnest(?::text[], ?::bigint[]) WITH ORDINALITY AS v(t, n, i) ORDER BY v.i"
        : "SELECT value->>0 AS t, value->>1 AS n FROM json_each(?) ORDER BY key";
    const back = await db.all<{ t: string; n: number | null }>(sql, params);
    expect(back.map((r) => [r.t, r.n === null ? null : Number(r.n)])).toEqual(ROWS);
  });
});
