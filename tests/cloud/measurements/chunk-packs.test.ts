// A compaction stores a stream's consecutive chunks as one pack (migration 405, repo/chunk-log.ts). What the API
// shows must not depend on it: the data endpoint serves a pack's points in time order beside single rows, from
// a window that starts and ends inside it and across pages of rows; a number inside a pack is stored (a resend in
// real time or by REST is skipped and counted once, a takeover sees it).
import { describe, expect, it } from "vitest";
import type { UpstreamChunkIn, UpstreamRef } from "../../../cloud/measurements/ingest/upstream-store.js";
import { onPostgres } from "../../support/test-database.js";
import { chunksMessage, ndjson, P, persistedUpstream, uploadProto, uuid, withPeer, DIRECT_COMMIT } from "./helpers.js";

const chunk = (n: number, elapsedUs: number, text: string): UpstreamChunkIn => ({
  sequenceNumber: n,
  dataPointGroups: [
    {
      dataId: { name: "v", type: "t" },
      dataPoints: [{ elapsedTime: BigInt(elapsedUs) * 1_000n, payload: Buffer.from(text) }],
    },
  ],
});
const stream = persistedUpstream;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("measurements: chunk packs", () => {
  const t = withPeer(DIRECT_COMMIT);
  const upstream = () => t.peer.svc.measurements.upstream;
  const store = (up: UpstreamRef, c: UpstreamChunkIn) => upstream().storeChunk(up, c);
  const lines = async (m: string, query = "") =>
    ndjson((await t.call(`${P}/data?name=${m}&time_format=ns${query}`)).body as string);
  const texts = async (m: string, query = "") =>
    (await lines(m, query)).map((l) => Buffer.from(l.data.d, "base64").toString());
  const packs = (up: UpstreamRef) =>
    t.peer.svc.db.all<{ first: number; last: number | null }>(
      `SELECT c.sequence_number AS first, c.last_number AS last FROM meas_chunks c JOIN meas_sequences s ON s.id = c.sequence_id
       WHERE s.uuid = ? ORDER BY c.sequence_number`,
      [up.streamId],
    );

  it("stores a stream's chunks of a compaction as one row, served from a window inside it in both orders", async () => {
    const up = stream();
    const results = await Promise.all(range(1, 20).map((n) => store(up, chunk(n, n * 10_000, `p${n}`))));
    expect(results.every((r) => r === "ok")).toBe(true);
    await upstream().drain();
    expect(await packs(up)).toEqual([{ first: 1, last: 20 }]);
    const all = range(1, 20).map((n) => `p${n}`);
    expect(await texts(up.sessionId)).toEqual(all);
    expect(await texts(up.sessionId, "&order=desc")).toEqual([...all].reverse());

    // A window that starts after the pack's first point and ends before its last: p7 to p11.
    // The times as text: nanoseconds since the epoch are beyond a double's precision.
    const body = (await t.call(`${P}/data?name=${up.sessionId}&time_format=ns`)).body as string;
    const t6 = BigInt([...body.matchAll(/"time":"?(\d+)/g)][5]![1]!);
    const startMs = Number(t6 / 1_000_000n) + 1;
    const window = `&start=${new Date(startMs).toISOString()}&end=${new Date(startMs + 50).toISOString()}`;
    expect(await texts(up.sessionId, window)).toEqual(range(7, 11).map((n) => `p${n}`));
    expect(await texts(up.sessionId, `${window}&order=desc`)).toEqual(
      range(7, 11)
        .map((n) => `p${n}`)
        .reverse(),
    );
  });

  it("serves packs that span many pages of single rows in time order, both ways", async () => {
    const a = stream();
    // 300 chunks in real time, one compaction: two packs (at most 256 chunks each).
    expect(await Promise.all(range(1, 300).map((n) => store(a, chunk(n, n * 1000, `a${n}`))))).toHaveLength(300);
    await upstream().drain();
    expect(await packs(a)).toEqual([
      { first: 1, last: 256 },
      { first: 257, last: 300 },
    ]);
    // 150 single rows of another sequence between a's points, by REST: more rows than a page holds (128).
    const b = chunksMessage(
      a.sessionId,
      uuid(),
      range(1, 150).map((n) => [
        { name: "v", type: "t", elapsed: BigInt(n * 2000 + 500) * 1000n, payload: Buffer.from(`b${n}`) },
      ]),
    );
    expect((await uploadProto(t.call, b)).status).toBe(200);
    const expected = [
      ...range(1, 300).map((n) => ({ us: n * 1000, text: `a${n}` })),
      ...range(1, 150).map((n) => ({ us: n * 2000 + 500, text: `b${n}` })),
    ]
      .sort((x, y) => x.us - y.us)
      .map((p) => p.text);
    expect(await texts(a.sessionId)).toEqual(expected);
    expect(await texts(a.sessionId, "&order=desc")).toEqual([...expected].reverse());
    expect(await texts(a.sessionId, "&limit=130")).toEqual(expected.slice(0, 130));
  });

  it("skips a resend of a number inside a pack, in real time and by REST, and counts it once", async () => {
    const up = stream();
    await Promise.all(range(1, 20).map((n) => store(up, chunk(n, n * 10_000, `p${n}`))));
    await upstream().drain();
    expect(await packs(up)).toEqual([{ first: 1, last: 20 }]);
    expect(await upstream().storedSequenceNumbers(up, 4)).toEqual([20, 19, 18, 17]);

    expect(await store(up, chunk(7, 70_000, "again"))).toBe("skipped");
    const upload = chunksMessage(
      up.sessionId,
      up.streamId,
      [19, 20, 21].map((n) => [
        { name: "v", type: "t", elapsed: BigInt(n * 10_000) * 1000n, payload: Buffer.from(`rest${n}`) },
      ]),
      19,
    );
    expect((await uploadProto(t.call, upload)).body.items).toEqual([
      { sequence_number: 19, result: "skipped" },
      { sequence_number: 20, result: "skipped" },
      { sequence_number: 21, result: "ok" },
    ]);
    const seq = (await t.call(`${P}/measurements/${up.sessionId}/sequences`)).body.items as Array<
      Record<string, unknown>
    >;
    expect(seq).toMatchObject([{ received_chunks_count: 21, received_data_points: 21 }]);
    expect(await texts(up.sessionId)).toEqual([...range(1, 20).map((n) => `p${n}`), "rest21"]);
    // A gap filled later becomes a pack of its own beside the first.
    expect(await store(up, chunk(23, 230_000, "p23"))).toBe("ok");
    await upstream().drain();
    expect(await store(up, chunk(22, 220_000, "p22"))).toBe("ok");
    await upstream().drain();
    expect(await store(up, chunk(22, 220_000, "again"))).toBe("skipped");
    expect(await upstream().storedSequenceNumbers(up, 30)).toEqual(range(1, 23).reverse());
    expect((await texts(up.sessionId)).slice(-3)).toEqual(["rest21", "p22", "p23"]);
  });

  it("keeps a chunk whose payload is in a file out of the packs around it", async () => {
    const up = stream();
    const big = "x".repeat(40_000);
    const texts5 = ["p1", "p2", big, "p4", "p5"];
    await Promise.all(texts5.map((text, i) => store(up, chunk(i + 1, (i + 1) * 10_000, text))));
    await upstream().drain();
    // PostgreSQL keeps every payload in the database: there the five are one pack.
    expect(await packs(up)).toEqual(
      onPostgres()
        ? [{ first: 1, last: 5 }]
        : [
            { first: 1, last: 2 },
            { first: 3, last: null },
            { first: 4, last: 5 },
          ],
    );
    expect(await texts(up.sessionId)).toEqual(texts5);
    expect(await texts(up.sessionId, "&order=desc")).toEqual([...texts5].reverse());
  });
});
