// Migration 402 moves chunk payloads out of the WITHOUT ROWID chunk table: a database written before it
// keeps every payload readable, and deleting chunks still deletes their payloads.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SqliteDb as Db } from "../../../cloud/database/db.js";
import { openStoreBefore, type OldStore } from "./old-store.js";
import { chunkPage } from "../../../cloud/measurements/repo/data.js";

const M = "5a0c1b2e-3f4d-4e5f-8a9b-0c1d2e3f4a5b";
let store: OldStore;
let db: Db;

beforeEach(async () => {
  store = await openStoreBefore(402, M);
  db = store.db;
});
afterEach(() => store.close());

describe("chunk payload migration (402)", () => {
  it("moves stored payloads to their own table, readable as before, deleted with their chunks", async () => {
    // Rows as a peer before 402 wrote them (the measurement's own row is not needed for this table).
    for (const n of [1, 2, 3])
      await db.run(
        "INSERT INTO meas_chunks (measurement_uuid, sequence_id, sequence_number, data_points, min_elapsed_ns, max_elapsed_ns, payload, created_at_ms) VALUES (?, 7, ?, 1, ?, ?, ?, 0)",
        [M, n, n * 10, n * 10, Buffer.alloc(100_000 * n, n)],
      );

    // 402 and 403 first; later areas' migrations (450 on) follow them.
    expect((await store.upgrade()).slice(0, 2)).toEqual([402, 403]);
    const cols = await db.all<{ name: string }>("PRAGMA table_info(meas_chunks)");
    expect(cols.map((c) => c.name)).not.toContain("payload");
    const rows = await chunkPage(db, { measUuid: M, desc: false, limit: 10 });
    // Rows written before payload files (403) keep their payload in the row.
    expect(rows.map((r) => [r.sequence_number, r.payload.length, r.payload[0], r.file_length])).toEqual([
      [1, 100_000, 1, null],
      [2, 200_000, 2, null],
      [3, 300_000, 3, null],
    ]);
    const desc = await chunkPage(db, { measUuid: M, desc: true, after: [30, 7, 3], limit: 1 });
    expect(desc.map((r) => r.sequence_number)).toEqual([2]);

    await db.run("DELETE FROM meas_sequences WHERE id = 7");
    expect(await db.get("SELECT COUNT(*) AS n FROM meas_chunk_payloads")).toEqual({ n: 0 });
  });
});
