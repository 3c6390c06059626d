// SQL literals for a transaction written as one script (Db.script): sqlite3's exec runs a whole script in
// one thread-pool round trip, but it binds no parameters. Only values that have an exact literal are
// accepted; anything else throws, and the caller takes its parameter-bound path instead.

export type LiteralValue = string | number | Buffer | null;

/** A value that cannot be written as a literal (a string with a NUL would cut sqlite3_exec's C string). */
export class NoLiteral extends Error {}

export function sqlLiteral(v: LiteralValue): string {
  if (v === null) return "NULL";
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) throw new NoLiteral(`not a safe integer: ${v}`);
    return String(v);
  }
  if (typeof v === "string") {
    if (v.includes("\u0000")) throw new NoLiteral("a string with a NUL character");
    return `'${v.replaceAll("'", "''")}'`;
  }
  return `X'${v.toString("hex")}'`;
}

/** `(a, b, c), (d, e, f)` for a multi-row VALUES clause. */
export const sqlRows = (rows: ReadonlyArray<readonly LiteralValue[]>): string => rows.map((r) => `(${r.map(sqlLiteral).join(", ")})`).join(", ");
