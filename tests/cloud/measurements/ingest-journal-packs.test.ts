// The ingest journal's apply writes each stream's chunks as packs at once (repo/pack-append.ts), not through the
// chunk log and its compaction. The rows it writes must be those a compaction makes of the same chunks (so every
// reader reads them alike): runs of consecutive numbers, at most PACK_CHUNKS a pack, a chunk whose payload is in a
// file alone. Through the peer: acknowledged one-point chunks of many streams are stored as packs, no log row is
// left behind, and they read back in time order.
import { describe, expect, it } from "vitest";
import type { Queryable } from "../../../cloud/database/db.js";
import { appendLogRows, compactLog, PACK_CHUNKS, type LogRow } from "../../../cloud/measurements/repo/chunk-log.js";
import { appendPacks } from "../../../cloud/measurements/repo/pack-append.js";
import type { UpstreamChunkIn, UpstreamRef } from "../../../cloud/measurements/ingest/upstream-store.js";
import { brokerChunkHook, ndjson, P, persistedUpstream, sequencesOf, withPeer } from "./helpers.js";

const chunk = (n: number): UpstreamChunkIn => ({
  sequenceNumber: n,
  dataPointGroups: [
    {
      dataId: { name: "k/v", type: "string" },
      dataPoints: [{ elapsedTime: BigInt(n) * 1000n, payload: Buffer.from(`v${n}`) }],
    },
  ],
});

/** Log rows with these numbers, in this order; those in `filed` have their payload in a file. */
const rows = (numbers: readonly number[], filed: ReadonlySet<number> = new Set()): LogRow[] =>
  numbers.map((n) => ({
    sequenceNumber: n,
    dataPoints: (n % 3) + 1,
    minElapsedNs: n * 1000 - (n % 7),
    maxElapsedNs: n * 1000 + (n % 5),
    payload: filed.has(n) ? Buffer.alloc(0) : Buffer.from(`payload of ${n}`.repeat((n % 4) + 1)),
    fileOffset: filed.has(n) ? n * 100 : null,
    fileLength: filed.has(n) ? 40 : null,
  }));

/** A sequence's stored rows, without the sequence's id. */
const stored = (q: Queryable, seq: number) =>
  q.all<Record<string, unknown>>(
    `SELECT c.sequence_number, c.last_number, c.data_points, c.min_elapsed_ns, c.max_elapsed_ns, c.created_at_ms,
       hex(p.payload) AS payload, p.file_offset, p.file_length, p.chunk_index
     FROM meas_chunks c JOIN meas_chunk_payloads p USING (sequence_id, sequence_number)
     WHERE c.sequence_id = ? ORDER BY c.sequence_number`,
    [seq],
  );

/** Stored rows as chunks: [number, data points, min, max, created at, payload (hex), file offset, file length]. */
function chunksOf(stored: ReadonlyArray<Record<string, unknown>>): unknown[][] {
  return stored.flatMap((r) => {
    const payload = r.payload as string;
    if (r.chunk_index === null)
      return [
        [
          r.sequence_number,
          r.data_points,
          r.min_elapsed_ns,
          r.max_elapsed_ns,
          r.created_at_ms,
          payload,
          r.file_offset,
          r.file_length,
        ],
      ];
    let at = 0;
    return (JSON.parse(r.chunk_index as string) as number[][]).map(([points, min, max, created, length], i) => {
      const bytes = payload.slice(at * 2, (at + length!) * 2);
      at += length!;
      return [(r.sequence_number as number) + i, points, min, max, created, bytes, null, null];
    });
  });
}

describe("the ingest journal's apply writes packs", () => {
  const t = withPeer({ ingestJournal: "on" });
  const upstream = () => t.peer.svc.measurements.upstream;
  /** Two new sequences of one new measurement (made through the upstream store). */
  async function twoSequences(): Promise<{ meas: string; a: number; b: number }> {
    const a = persistedUpstream();
    const b = { ...persistedUpstream(), sessionId: a.sessionId };
    for (const up of [a, b]) expect(await brokerChunkHook(t.peer, up)(chunk(1))).toBeUndefined();
    await upstream().drain(); // the first chunk made the measurement directly: through the log, now compacted
    const ids = await t.peer.svc.db.all<{ id: number; uuid: string }>(
      "SELECT id, uuid FROM meas_sequences WHERE measurement_uuid = ?",
      [a.sessionId],
    );
    const id = (up: UpstreamRef) => ids.find((r) => r.uuid === up.streamId)!.id;
    return { meas: a.sessionId, a: id(a), b: id(b) };
  }

  it("writes the rows a compaction of the same chunks makes", async () => {
    const { meas, a, b } = await twoSequences();
    // From 10 on (1 is stored): out of order, a gap, a run longer than a pack, payloads in files in a run and alone.
    const numbers = [
      12,
      10,
      11,
      13,
      20,
      ...Array.from({ length: PACK_CHUNKS + 40 }, (_, i) => 30 + i),
      400,
      401,
      402,
      500,
    ];
    const filed = new Set([40, 401, 500]);
    const createdAtMs = 1_764_000_000_123;
    const db = t.peer.svc.db;
    await db.transaction(async (tx) => {
      expect(await appendPacks(tx, [{ measUuid: meas, sequenceId: a, rows: rows(numbers, filed) }], createdAtMs)).toBe(
        10,
      );
    });
    await db.transaction(async (tx) => {
      await appendLogRows(tx, [{ measUuid: meas, sequenceId: b, rows: rows(numbers, filed) }], createdAtMs);
      await compactLog(tx, { sequenceId: b });
    });
    const packed = await stored(db, a);
    expect(packed.map((r) => [r.sequence_number, r.last_number])).toEqual([
      [1, null],
      [10, 13],
      [20, null],
      [30, 39],
      [40, null],
      [41, 40 + PACK_CHUNKS],
      [41 + PACK_CHUNKS, 30 + PACK_CHUNKS + 39],
      [400, null],
      [401, null],
      [402, null],
      [500, null],
    ]);
    // The same chunks as the compaction's (which cuts a long run elsewhere); chunk 1 of each was stored apart.
    const compacted = await stored(db, b);
    expect(chunksOf(packed).slice(1)).toEqual(chunksOf(compacted).slice(1));
    expect(chunksOf(packed).length).toBe(numbers.length + 1);
    // Runs no longer than a pack are cut alike.
    const short = (r: Record<string, unknown>) =>
      (r.sequence_number as number) < 30 || (r.sequence_number as number) >= 400;
    expect(packed.filter(short).slice(1)).toEqual(compacted.filter(short).slice(1));
  });

  it("refuses a pack whose first number is stored, writing nothing of the commit", async () => {
    const { meas, a } = await twoSequences();
    const write = (numbers: number[]) =>
      t.peer.svc.db.transaction((tx) => appendPacks(tx, [{ measUuid: meas, sequenceId: a, rows: rows(numbers) }], 1));
    expect(await write([5, 6, 7])).toBe(1);
    await expect(write([8, 9, 5])).rejects.toThrow(/UNIQUE|constraint/i);
    expect((await stored(t.peer.svc.db, a)).map((r) => [r.sequence_number, r.last_number])).toEqual([
      [1, null],
      [5, 7],
    ]);
  });

  /** 40 streams whose measurements are made (each stream's chunk 1 stored). */
  async function fleet() {
    const ups = Array.from({ length: 40 }, () => persistedUpstream());
    const hooks = ups.map((up) => brokerChunkHook(t.peer, up));
    for (const hook of hooks) expect(await hook(chunk(1))).toBeUndefined();
    await upstream().drain(); // the first chunks made the measurements directly: through the log, now compacted
    return { ups, hooks };
  }
  /** The fleet's packs: their first and last numbers, and how many chunks their index lists. */
  const packsOf = (ups: readonly UpstreamRef[]) =>
    t.peer.svc.db.all<{ first: number; last: number | null; listed: number | null }>(
      `SELECT sequence_number AS first, last_number AS last, json_array_length(p.chunk_index) AS listed
       FROM meas_chunks c JOIN meas_chunk_payloads p USING (sequence_id, sequence_number)
       WHERE c.measurement_uuid IN (SELECT value FROM json_each(?)) ORDER BY c.sequence_id, c.sequence_number`,
      [JSON.stringify(ups.map((u) => u.sessionId))],
    );
  const logRows = async () => (await t.peer.svc.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM meas_chunk_log"))!.n;

  it("stores acknowledged one-point chunks of many streams as packs, with no log row, read back in order", async () => {
    const { ups, hooks } = await fleet();
    // Each stream 60 more chunks of one point, acknowledged in rounds as a fleet of slow edges sends them.
    for (let round = 2; round <= 61; round++) {
      const answers = await Promise.all(hooks.map((hook) => hook(chunk(round))));
      expect(answers.every((a) => a === undefined)).toBe(true);
    }
    for (const up of [ups[0]!, ups[39]!]) {
      expect(await sequencesOf(t.call, up.sessionId)).toMatchObject([
        { uuid: up.streamId, received_chunks_count: 61, received_data_points: 61 },
      ]);
      const body = (await t.call(`${P}/data?name=${up.sessionId}&order=desc`)).body as string;
      expect(ndjson(body).map((l) => Buffer.from(l.data.d, "base64").toString())).toEqual(
        Array.from({ length: 61 }, (_, i) => `v${61 - i}`),
      );
    }
    expect(await logRows()).toBe(0);
    const packs = await packsOf(ups);
    expect(packs.reduce((n, p) => n + (p.last ?? p.first) - p.first + 1, 0)).toBe(40 * 61);
    for (const p of packs) expect(p.listed ?? 1).toBe((p.last ?? p.first) - p.first + 1);
  });

  it("makes one pack of a stream's chunks acknowledged together", async () => {
    const { ups, hooks } = await fleet();
    // Handed over in one turn: one group commit, one journal record, one apply.
    const answers = await Promise.all(
      hooks.flatMap((hook) => Array.from({ length: 60 }, (_, i) => hook(chunk(i + 2)))),
    );
    expect(answers.every((a) => a === undefined)).toBe(true);
    await upstream().settled();
    expect(await logRows()).toBe(0);
    const packs = await packsOf(ups);
    expect(packs).toEqual(
      ups.flatMap(() => [
        { first: 1, last: null, listed: null },
        { first: 2, last: 61, listed: 60 },
      ]),
    );
  });
});
