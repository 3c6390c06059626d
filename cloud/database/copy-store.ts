// Copies a cloud peer's SQLite database into an empty, migrated PostgreSQL database (cloud-peer migrate-store):
// every table in the order SQLite created them (parents before the tables that reference them), tree rows parent
// first, in one PostgreSQL transaction, then identity sequences moved past the copied ids.
import type { Db, Queryable, SqlParam } from "./db.js";

type Row = Record<string, SqlParam>;

/** Whether the PostgreSQL database holds no table yet (the only target migrate-store accepts). */
export async function postgresIsEmpty(db: Db): Promise<boolean> {
  const r = await db.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = current_schema()",
  );
  return r!.n === 0;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
/** Rows per INSERT, under PostgreSQL's 65535 parameters per statement. */
const rowsPerInsert = (columns: number) => Math.max(1, Math.min(500, Math.floor(30_000 / columns)));
const PAGE = 2_000;

/** Rows of a tree table (a parent_uuid column) with every parent before its children. */
function parentsFirst(rows: Row[]): Row[] {
  const out: Row[] = [];
  const placed = new Set<SqlParam>();
  let left = rows;
  while (left.length > 0) {
    const ready = left.filter((r) => r.parent_uuid === null || placed.has(r.parent_uuid!));
    // A parent missing from the table: the rest go as they are and the foreign key reports it.
    const next = ready.length > 0 ? ready : left;
    for (const r of next) out.push(r), placed.add(r.uuid!);
    left = left.filter((r) => !next.includes(r));
  }
  return out;
}

async function insertRows(tx: Queryable, table: string, columns: string[], rows: Row[]): Promise<void> {
  const per = rowsPerInsert(columns.length);
  const tuple = `(${columns.map(() => "?").join(", ")})`;
  for (let i = 0; i < rows.length; i += per) {
    const part = rows.slice(i, i + per);
    await tx.run(
      `INSERT INTO ${quote(table)} (${columns.map(quote).join(", ")}) VALUES ${part.map(() => tuple).join(", ")}`,
      part.flatMap((r) => columns.map((c) => r[c] ?? null)),
    );
  }
}

/**
 * Copies every table of `src` (SQLite) into `dst` (PostgreSQL, migrated to the same versions, empty). `transform`
 * may rewrite a row before it is written (payloads read from their files). Returns the rows copied per table.
 */
export async function copyStore(
  src: Db,
  dst: Db,
  transform: (table: string, row: Row) => Promise<Row> = async (_t, r) => r,
): Promise<Record<string, number>> {
  const tables = (
    await src.all<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'schema_migrations' ORDER BY rowid",
    )
  ).map((t) => t.name);
  const copied: Record<string, number> = {};
  await dst.transaction(async (tx) => {
    for (const table of tables) {
      const target = await tx.all<{ column_name: string; is_identity: string }>(
        "SELECT column_name, is_identity FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
        [table],
      );
      if (target.length === 0)
        throw new Error(`table ${table} is not in the target database (is it migrated to the same version?)`);
      const have = new Set(
        (await src.all<{ name: string }>(`SELECT name FROM pragma_table_info(?)`, [table])).map((c) => c.name),
      );
      // PostgreSQL's stand-in for SQLite's rowid (migration 200) takes the rowid itself.
      const columns = target.map((c) => c.column_name).filter((c) => have.has(c) || c === "rowid");
      const select = `SELECT ${columns.map((c) => (have.has(c) ? quote(c) : "rowid AS rowid")).join(", ")} FROM ${quote(table)}`;
      let n = 0;
      if (have.has("parent_uuid") && have.has("uuid")) {
        const rows = parentsFirst(await src.all<Row>(select));
        await insertRows(tx, table, columns, await Promise.all(rows.map((r) => transform(table, r))));
        n = rows.length;
      } else {
        // Pages in the table's own order; the source is not written meanwhile (the peer is stopped).
        for (let offset = 0; ; offset += PAGE) {
          const rows = await src.all<Row>(`${select} LIMIT ? OFFSET ?`, [PAGE, offset]);
          const out: Row[] = [];
          for (const r of rows) out.push(await transform(table, r));
          await insertRows(tx, table, columns, out);
          n += rows.length;
          if (rows.length < PAGE) break;
        }
      }
      copied[table] = n;
      for (const c of target.filter((t) => t.is_identity === "YES" && columns.includes(t.column_name)))
        await tx.get(
          `SELECT setval(pg_get_serial_sequence(?, ?), COALESCE((SELECT MAX(${quote(c.column_name)}) FROM ${quote(table)}), 0) + 1, false)`,
          [quote(table), c.column_name],
        );
    }
  });
  return copied;
}
