// The SQLite wrapper keeps prepared statements per SQL text: a failed statement must not poison the
// cache, reads must not hold a snapshot open, and close must finalize what it kept.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteDb as Db, isUniqueViolation } from "../../../cloud/database/db.js";

let dir: string;
let db: Db;
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "storage-db-"));
  db = await Db.open(path.join(dir, "t.db"));
  await db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
});
afterEach(async () => {
  await db.close().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("Db statements", () => {
  it("reuses a statement across calls, also after it failed", async () => {
    const insert = "INSERT INTO t (k, v) VALUES (?, ?)";
    await db.run(insert, ["a", 1]);
    const dup = await db.run(insert, ["a", 2]).catch((e: unknown) => e);
    expect(isUniqueViolation(dup)).toBe(true);
    expect(await db.run(insert, ["b", 2])).toMatchObject({ changes: 1 });
    expect(await db.all("SELECT k, v FROM t ORDER BY k")).toEqual([
      { k: "a", v: 1 },
      { k: "b", v: 2 },
    ]);
    expect(await db.get("SELECT v FROM t WHERE k = ?", ["b"])).toEqual({ v: 2 });
    expect(await db.get("SELECT v FROM t WHERE k = ?", ["zz"])).toBeUndefined();
  });

  it("rejects SQL that does not prepare, and the connection goes on", async () => {
    await expect(db.all("SELECT nope FROM t")).rejects.toThrow(/no such column/);
    await expect(db.all("SELECT nope FROM t")).rejects.toThrow(/no such column/);
    expect(await db.get("SELECT COUNT(*) AS n FROM t")).toEqual({ n: 0 });
  });

  it("sees its own committed writes through a cached read and lets the WAL checkpoint fully", async () => {
    const read = "SELECT v FROM t WHERE k = ?";
    await db.run("INSERT INTO t (k, v) VALUES (?, ?)", ["x", 1]);
    expect(await db.get(read, ["x"])).toEqual({ v: 1 });
    await db.transaction(async (tx) => {
      await tx.run("UPDATE t SET v = ? WHERE k = ?", [2, "x"]);
    });
    expect(await db.get(read, ["x"])).toEqual({ v: 2 });
    // No cached statement holds a read snapshot: a full checkpoint is not blocked (busy = 0).
    expect(await db.get("PRAGMA wal_checkpoint(TRUNCATE)")).toMatchObject({ busy: 0 });
    // Closing finalizes the cached statements first (sqlite3 refuses to close with unfinalized ones).
    await expect(db.close()).resolves.toBeUndefined();
  });
});

describe("Db transactions with early reads", () => {
  it("keeps every write inside the transaction while its reads run beside BEGIN: a failure undoes them all", async () => {
    await db.run("INSERT INTO t (k, v) VALUES ('a', 1)");
    const failed = await db
      .transaction(
        async (tx) => {
          // Issued at once, none awaited: the writes must still wait for BEGIN.
          const read = tx.get("SELECT v FROM t WHERE k = 'a'");
          const writes = ["b", "c", "d"].map((k, i) => tx.run("INSERT INTO t (k, v) VALUES (?, ?)", [k, i]));
          expect(await read).toEqual({ v: 1 });
          await Promise.all(writes);
          expect(await tx.get("SELECT COUNT(*) AS n FROM t")).toEqual({ n: 4 });
          throw new Error("undo");
        },
        { earlyReads: true },
      )
      .catch((e: unknown) => e);
    expect((failed as Error).message).toBe("undo");
    expect(await db.all("SELECT k FROM t")).toEqual([{ k: "a" }]);

    await db.transaction(
      async (tx) => {
        const w = tx.run("UPDATE t SET v = v + 1 WHERE k = 'a'");
        expect(await tx.all("SELECT k FROM t")).toEqual([{ k: "a" }]);
        await w;
      },
      { earlyReads: true },
    );
    expect(await db.all("SELECT k, v FROM t")).toEqual([{ k: "a", v: 2 }]);
  });
});

describe("Db checkpoints", () => {
  it("copies committed writes into the database file on its own connection, and close leaves no WAL behind", async () => {
    const file = path.join(dir, "t.db");
    const marker = `checkpoint-marker-${Date.now()}`;
    await db.run("INSERT INTO t (k, v) VALUES (?, ?)", [marker, 1]);
    // Far below the writer's own autocheckpoint threshold: only the checkpointer moves it out of the WAL.
    const inFile = () => fs.readFileSync(file).includes(Buffer.from(marker));
    expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(0);
    const deadline = Date.now() + 5000;
    while (!inFile() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(inFile()).toBe(true);
    expect(await db.get("SELECT v FROM t WHERE k = ?", [marker])).toEqual({ v: 1 });
    await db.close();
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    const again = await Db.open(file);
    expect(await again.get("SELECT v FROM t WHERE k = ?", [marker])).toEqual({ v: 1 });
    await again.close();
  });

  it("starts the WAL over after each round, even under writes that never pause", async () => {
    const file = path.join(dir, "t.db");
    await db.exec("CREATE TABLE blobs (id INTEGER PRIMARY KEY, b BLOB NOT NULL)");
    const blob = Buffer.alloc(16 * 1024, 7);
    // The WAL header's checkpoint sequence number and salt change each time the WAL starts over.
    const generation = () => fs.readFileSync(`${file}-wal`).subarray(12, 20).toString("hex");
    let writing = true;
    let written = 0;
    const perWriter = [0, 0];
    // Two writers back to back, so a transaction always waits for the lock: a checkpoint beside them alone
    // would seldom see the WAL complete.
    const writers = [0, 1].map(async (w) => {
      for (let i = 0; writing; i++) {
        await db.transaction((tx) =>
          tx.run("INSERT OR REPLACE INTO blobs (id, b) VALUES (?, ?)", [(i * 2 + w) % 64, blob]),
        );
        written++;
        perWriter[w]!++;
      }
    });
    try {
      for (let round = 0; round < 5; round++) {
        const before = generation();
        const at = written;
        await db.checkpoint();
        const deadline = Date.now() + 10_000;
        while ((generation() === before || written <= at + 1) && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 10));
        expect(generation(), `round ${round}`).not.toBe(before);
      }
      // Every id written at least once (32 per writer) before the writers stop: fast rounds can finish first.
      while (Math.min(...perWriter) < 32) await new Promise((r) => setTimeout(r, 10));
    } finally {
      writing = false;
      await Promise.all(writers);
    }
    expect(await db.get("SELECT COUNT(*) AS n FROM blobs")).toEqual({ n: 64 });
  }, 120_000);
});
