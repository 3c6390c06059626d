// Migration 405 (chunk packs): a store written before it keeps its rows as packs of one chunk; the log it left is
// compacted into a pack beside them, every chunk is read exactly once, and a number stored either way stays taken.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SqliteDb as Db } from "../../../cloud/database/db.js";
import { openStoreBefore, type OldStore } from "./old-store.js";
import { appendLogRows, storedInRuns, compactLog, type LogRow } from "../../../cloud/measurements/repo/chunk-log.js";
import { chunkPage, chunksOf } from "../../../cloud/measurements/repo/data.js";
import { storedChunkNumbers } from "../../../cloud/measurements/repo/sequences.js";

const M = "6b1d2c3f-4a5e-4f60-9b0c-1d2e3f4a5b6c";
let store: OldStore;
let db: Db;

beforeEach(async () => {
  store = await openStoreBefore(405, M);
  db = store.db;
});
afterEach(() => store.close());

const row = (n: number): LogRow => ({
  sequenceNumber: n,
  dataPoints: 1,
  minElapsedNs: n * 10,
  maxElapsedNs: n * 10,
  payload: Buffer.from([n, 0, 255]),
  fileOffset: null,
  fileLength: null,
});

describe("chunk pack migration (405)", () => {
  it("keeps rows written before as one-chunk packs beside new packs, each chunk read and stored once", async () => {
    // As a peer before 405 left them: numbers 1-3 compacted (one row each), 4-6 still in the chunk log.
    for (const n of [1, 2, 3]) {
      await db.run(
        "INSERT INTO meas_chunks (measurement_uuid, sequence_id, sequence_number, data_points, min_elapsed_ns, max_elapsed_ns, created_at_ms) VALUES (?, 7, ?, 1, ?, ?, 0)",
        [M, n, n * 10, n * 10],
      );
      await db.run("INSERT INTO meas_chunk_payloads (sequence_id, sequence_number, payload) VALUES (7, ?, ?)", [
        n,
        row(n).payload,
      ]);
    }
    for (const n of [4, 5, 6])
      await db.run(
        "INSERT INTO meas_chunk_log (measurement_uuid, sequence_id, sequence_number, data_points, min_elapsed_ns, max_elapsed_ns, created_at_ms, payload) VALUES (?, 7, ?, 1, ?, ?, ?, ?)",
        [M, n, n * 10, n * 10, n, row(n).payload],
      );

    expect((await store.upgrade()).slice(0, 1)).toEqual([405]);
    expect(await db.transaction((tx) => compactLog(tx))).toBe(3);
    expect(await db.all("SELECT sequence_number AS n, last_number AS l FROM meas_chunks ORDER BY 1")).toEqual([
      { n: 1, l: null },
      { n: 2, l: null },
      { n: 3, l: null },
      { n: 4, l: 6 },
    ]);
    const read = async (desc: boolean) =>
      (await chunkPage(db, { measUuid: M, desc, limit: 10 }))
        .flatMap(chunksOf)
        .map((c) => [c.sequence_number, c.min_elapsed_ns, [...c.payload]]);
    const asc = [1, 2, 3, 4, 5, 6].map((n) => [n, n * 10, [n, 0, 255]]);
    expect(await read(false)).toEqual(asc);
    // Rows in order of their latest point; a pack's chunks in number order (the data endpoint sorts points).
    expect(await read(true)).toEqual([asc[3], asc[4], asc[5], asc[2], asc[1], asc[0]]);
    expect(await storedChunkNumbers(db, M, "s", 10)).toEqual([6, 5, 4, 3, 2, 1]);

    // An old row's number and one inside the pack are stored: found before the append (SQLite) or left by it
    // (PostgreSQL); 7 is new.
    if (db.dialect === "sqlite") {
      const found = await storedInRuns(db, [{ measUuid: M, streamUuid: "s", numbers: [2, 5, 7] }]);
      expect([...found.get(`${M} s`)!].sort((a, b) => a - b)).toEqual([2, 5]);
      expect(await appendLogRows(db, [{ measUuid: M, sequenceId: 7, rows: [row(7)] }], 0)).toEqual([]);
    } else {
      const stored = await appendLogRows(db, [{ measUuid: M, sequenceId: 7, rows: [2, 5, 7].map(row) }], 0);
      expect(stored).toEqual([
        { sequence_id: 7, sequence_number: 2 },
        { sequence_id: 7, sequence_number: 5 },
      ]);
    }
    expect((await read(false)).map((c) => c[0])).toEqual([1, 2, 3, 4, 5, 6, 7]);

    // Deleting the sequence deletes packs and their payloads.
    await db.run("DELETE FROM meas_sequences WHERE id = 7");
    expect(await db.get("SELECT COUNT(*) AS n FROM meas_chunk_payloads")).toEqual({ n: 0 });
  });
});
