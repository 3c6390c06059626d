// Statements a transaction starts at once (allStatements) reach PostgreSQL one after another: pg's own
// queueing of a query on a busy client is deprecated (a warning on every PostgreSQL peer) and goes in pg 9.
import { afterAll, beforeAll, expect, it } from "vitest";
import { allStatements } from "../../../cloud/database/db.js";
import { PgDb } from "../../../cloud/database/pg-db.js";
import { startPostgres, type PgServer } from "../../support/postgres.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(() => server?.stop());

it("runs a transaction's concurrent statements in order, without pg's deprecation warning", async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  const db = await PgDb.open(await server.createDatabase());
  try {
    await db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY)");
    const inserted = await db.transaction(async (tx) => {
      await allStatements(Array.from({ length: 20 }, (_, i) => tx.run("INSERT INTO t (n) VALUES (?)", [i])));
      return tx.all<{ n: number }>("SELECT n FROM t ORDER BY n");
    });
    expect(inserted.map((r) => r.n)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // A failing statement among them still fails the transaction, and nothing of it stays.
    await expect(
      db.transaction((tx) =>
        allStatements([tx.run("INSERT INTO t (n) VALUES (?)", [100]), tx.run("INSERT INTO t (n) VALUES (?)", [1])]),
      ),
    ).rejects.toThrow();
    expect(await db.get("SELECT COUNT(*) AS c FROM t WHERE n = 100")).toEqual({ c: 0 });
    await new Promise((r) => setImmediate(r));
    expect(warnings.filter((w) => /already executing a query/.test(w))).toEqual([]);
  } finally {
    process.off("warning", onWarning);
    await db.close();
  }
});
