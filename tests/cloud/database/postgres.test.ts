// The PostgreSQL database layer on a real PostgreSQL 15 (started here, removed afterwards): SQLite's SQL
// translated, numbers and bytes as SQLite gives them, writers serialised across instances (those on disjoint
// resources side by side), migrations once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isUniqueViolation } from "../../../cloud/database/db.js";
import { migrate, type Migration } from "../../../cloud/database/migrate.js";
import { PgDb } from "../../../cloud/database/pg-db.js";
import { toPostgres } from "../../../cloud/database/pg-sql.js";
import { startPostgres, type PgServer } from "../../support/postgres.js";
import { adminToken } from "../accounts/helpers.js";
import { startTestPeer } from "../harness.js";

describe("SQLite statements in PostgreSQL's dialect", () => {
  it("numbers placeholders outside quoted text and names only", () => {
    expect(toPostgres(`SELECT '?', "a?" FROM t WHERE a = ? AND b = 'it''s ?' AND c IN (?, ?)`)).toBe(
      `SELECT '?', "a?" FROM t WHERE a = $1 AND b = 'it''s ?' AND c IN ($2, $3)`,
    );
  });
  it("turns INSERT OR IGNORE into ON CONFLICT DO NOTHING, before RETURNING", () => {
    expect(toPostgres("INSERT OR IGNORE INTO t (a) VALUES (?)")).toBe(
      "INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING",
    );
    expect(toPostgres("INSERT OR IGNORE INTO t (a) VALUES (?), (?) RETURNING a AS n")).toBe(
      "INSERT INTO t (a) VALUES ($1), ($2) ON CONFLICT DO NOTHING RETURNING a AS n",
    );
  });
  it("turns scalar MAX/MIN into GREATEST/LEAST and leaves the aggregates", () => {
    expect(toPostgres("UPDATE t SET m = MAX(m, ?) WHERE k = ?")).toBe("UPDATE t SET m = GREATEST(m, $1) WHERE k = $2");
    expect(toPostgres("SELECT MAX(seq) AS m, SUM(MIN(a, COALESCE(b, 0))) FROM t")).toBe(
      "SELECT MAX(seq) AS m, SUM(LEAST(a, COALESCE(b, 0))) FROM t",
    );
  });
  it("keeps SQLite's case-insensitive comparisons", () => {
    expect(toPostgres("SELECT * FROM users WHERE name = ? COLLATE NOCASE")).toBe(
      "SELECT * FROM users WHERE lower(name) = lower($1::text)",
    );
    expect(toPostgres("SELECT * FROM t WHERE name LIKE ? ESCAPE '\\'")).toBe(
      "SELECT * FROM t WHERE name ILIKE $1 ESCAPE '\\'",
    );
  });
});

describe("PgDb on a real PostgreSQL", () => {
  let server: PgServer;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(() => server?.stop());

  it("gives BIGINT and COUNT as numbers, bytes as Buffers, booleans as 0/1", async () => {
    const db = await PgDb.open(await server.createDatabase());
    try {
      await db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, n BIGINT, b BYTEA, f BIGINT)");
      const big = 2 ** 40 + 7;
      const bytes = Buffer.from([0, 1, 2, 255]);
      await db.run("INSERT INTO t (k, n, b, f) VALUES (?, ?, ?, ?)", ["a", big, bytes, true]);
      expect(await db.get("SELECT n, b, f FROM t WHERE k = ?", ["a"])).toEqual({ n: big, b: bytes, f: 1 });
      expect(await db.get("SELECT COUNT(*) AS c, SUM(n) AS s FROM t")).toEqual({ c: 1, s: big });
      const dup = await db.run("INSERT INTO t (k) VALUES (?)", ["a"]).catch((e: unknown) => e);
      expect(isUniqueViolation(dup)).toBe(true);
      expect((await db.run("INSERT OR IGNORE INTO t (k) VALUES (?)", ["a"])).changes).toBe(0);
    } finally {
      await db.close();
    }
  });

  it("serialises transactions across instances: no read-then-write of one is lost to another's", async () => {
    const url = await server.createDatabase();
    const [a, b] = [await PgDb.open(url), await PgDb.open(url)];
    try {
      await a.exec("CREATE TABLE counter (n BIGINT NOT NULL); INSERT INTO counter VALUES (0)");
      const bump = (db: PgDb) =>
        db.transaction(async (tx) => {
          const { n } = (await tx.get<{ n: number }>("SELECT n FROM counter"))!;
          await new Promise((r) => setTimeout(r, 2));
          await tx.run("UPDATE counter SET n = ?", [n + 1]);
        });
      await Promise.all(Array.from({ length: 20 }, (_, i) => bump(i % 2 ? a : b)));
      expect(await a.get("SELECT n FROM counter")).toEqual({ n: 20 });
      // A failed transaction leaves nothing behind.
      await expect(
        a.transaction(async (tx) => {
          await tx.run("UPDATE counter SET n = 0");
          throw new Error("no");
        }),
      ).rejects.toThrow("no");
      expect(await b.get("SELECT n FROM counter")).toEqual({ n: 20 });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("runs transactions on disjoint resources side by side; one on the same resource, or naming none, waits", async () => {
    const url = await server.createDatabase();
    const [a, b] = [await PgDb.open(url), await PgDb.open(url)];
    try {
      await a.exec("CREATE TABLE r (k TEXT PRIMARY KEY, n BIGINT NOT NULL)");
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      const first = a.transaction(
        async (tx) => {
          await tx.run("INSERT INTO r (k, n) VALUES (?, ?)", ["m1", 1]);
          entered();
          await held;
        },
        { locks: ["meas:1", "meas:2"] },
      );
      await inside;
      const done: string[] = [];
      const write = (k: string, locks?: string[]) =>
        b
          .transaction((tx) => tx.run("INSERT INTO r (k, n) VALUES (?, ?)", [k, 1]), { locks })
          .then(() => void done.push(k));
      // On another instance, while the first holds meas:1 and meas:2: the disjoint one commits...
      await write("other", ["meas:3"]);
      // ...and one on the same resource, or naming none, waits. (These start after the disjoint one: PostgreSQL
      // queues a lock request behind a waiting one it conflicts with, so a disjoint writer asking after the
      // exclusive one waits too, and here nothing would release the first.)
      const same = write("same", ["meas:2", "meas:4"]);
      const global = write("global");
      await new Promise((r) => setTimeout(r, 300));
      expect(done).toEqual(["other"]);
      release();
      await Promise.all([first, same, global]);
      expect((await a.all<{ k: string }>("SELECT k FROM r ORDER BY k")).map((r) => r.k)).toEqual([
        "global",
        "m1",
        "other",
        "same",
      ]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("reports the database not ready while PostgreSQL is away, and serves again once it is back", async () => {
    const peer = await startTestPeer({ config: { database: await server.createDatabase() } });
    const ready = async () => {
      const r = await fetch(`${peer.url}/api/health/ready`);
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    let halted = false;
    try {
      const token = await adminToken(peer);
      expect(await ready()).toMatchObject({ status: 200, body: { checks: { database: "ok" } } });
      server.halt();
      halted = true;
      expect(await ready()).toMatchObject({
        status: 503,
        body: { title: expect.stringMatching(/^not ready: database: /) },
      });
      server.resume();
      halted = false;
      // The pool drops the connections the restart cut and opens new ones.
      await expect.poll(async () => (await ready()).status, { timeout: 30_000, interval: 500 }).toBe(200);
      expect((await peer.api("/auth/users/me", { headers: { "X-Intdash-Token": token } })).status).toBe(200);
    } finally {
      if (halted) server.resume();
      await peer.stop();
    }
  });

  it("migrates once when instances start together, with SQLite's DDL translated", async () => {
    const url = await server.createDatabase();
    const dbs = await Promise.all([1, 2, 3].map(() => PgDb.open(url)));
    const migrations: Migration[] = [
      {
        version: 1,
        name: "one",
        up: "CREATE TABLE m (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE COLLATE NOCASE, p BLOB, t INTEGER)",
      },
      { version: 2, name: "two", up: "CREATE TABLE k (a TEXT NOT NULL, PRIMARY KEY (a)) WITHOUT ROWID" },
    ];
    try {
      const applied = await Promise.all(dbs.map((db) => migrate(db, migrations)));
      expect(applied.flat().sort()).toEqual([1, 2]);
      const db = dbs[0]!;
      expect(await db.all("SELECT version FROM schema_migrations ORDER BY version")).toEqual([
        { version: 1 },
        { version: 2 },
      ]);
      const first = await db.get<{ id: number }>("INSERT INTO m (name, t) VALUES (?, ?) RETURNING id", [
        "Alice",
        2 ** 45,
      ]);
      expect(first).toEqual({ id: 1 });
      expect(await db.get("SELECT id, t FROM m WHERE name = ?", ["ALICE"])).toEqual({ id: 1, t: 2 ** 45 });
      expect(
        isUniqueViolation(await db.run("INSERT INTO m (name) VALUES (?)", ["alice"]).catch((e: unknown) => e)),
      ).toBe(true);
    } finally {
      for (const db of dbs) await db.close();
    }
  });
});
