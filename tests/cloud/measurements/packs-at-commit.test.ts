// On PostgreSQL a group commit writes a stream's chunks as packs at once when the commit brings enough of them
// (ingest/shared-commit.ts PACK_AT_COMMIT: a backlog, a fast stream), and appends the others to the chunk log for
// its compaction. Wherever a chunk goes, what the API shows is the same: every number stored once, a number
// stored before (in the log, in a pack) answered `skipped` and counted once, the points in time order.
import { describe, expect, it } from "vitest";
import type { UpstreamChunkIn, UpstreamRef } from "../../../cloud/measurements/ingest/upstream-store.js";
import { commitLane, POSTGRES_LANES } from "../../../cloud/measurements/ingest/commit-lanes.js";
import { PACK_AT_COMMIT } from "../../../cloud/measurements/ingest/shared-commit.js";
import { compactLog } from "../../../cloud/measurements/repo/chunk-log.js";
import { onPostgres } from "../../support/test-database.js";
import { countCommits, DIRECT_COMMIT, ndjson, P, persistedUpstream, sequencesOf, withPeer } from "./helpers.js";

const chunk = (n: number): UpstreamChunkIn => ({
  sequenceNumber: n,
  dataPointGroups: [
    {
      dataId: { name: "v", type: "t" },
      dataPoints: [{ elapsedTime: BigInt(n) * 1_000_000n, payload: Buffer.from(`p${n}`) }],
    },
  ],
});
const stream = persistedUpstream;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const texts = (ns: number[]) => ns.map((n) => `p${n}`);

describe("measurements: a stream's chunks of one commit as packs (PostgreSQL)", () => {
  const t = withPeer(DIRECT_COMMIT);
  const upstream = () => t.peer.svc.measurements.upstream;
  /** The chunks given in one turn, so they share one commit (it starts on the next turn). */
  const storeAll = (up: UpstreamRef, ns: number[]) => Promise.all(ns.map((n) => upstream().storeChunk(up, chunk(n))));
  const served = async (m: string) =>
    ndjson((await t.call(`${P}/data?name=${m}`)).body as string).map((l) => Buffer.from(l.data.d, "base64").toString());
  /** Where each commit's chunks went: "packs", "log" or both, in commit order. */
  async function written(fn: () => Promise<unknown>) {
    const counted = countCommits(t.peer.svc.db, () => upstream().drain());
    try {
      await fn();
      return (await counted.statements()).map((sqls) =>
        [
          sqls.some((s) => s.includes("INSERT INTO meas_chunks ")) ? "packs" : "",
          sqls.some((s) => s.includes("INSERT INTO meas_chunk_log")) ? "log" : "",
        ]
          .filter(Boolean)
          .join("+"),
      );
    } finally {
      counted.restore();
    }
  }

  it("packs a stream's chunks of a commit when there are enough, skipping what the log or a pack holds, and serves all in order", async () => {
    const up = stream();
    const few = range(1, PACK_AT_COMMIT - 2);
    expect(await written(() => storeAll(up, few))).toEqual(["log"]);
    // The last two of the log again, with enough new ones after them.
    const next = range(PACK_AT_COMMIT - 3, PACK_AT_COMMIT + 12);
    let answers: string[] = [];
    expect(await written(async () => (answers = await storeAll(up, next)))).toEqual([onPostgres() ? "packs" : "log"]);
    expect(answers).toEqual([...["skipped", "skipped"], ...Array(next.length - 2).fill("ok")]);
    await t.peer.svc.db.transaction((tx) => compactLog(tx));
    // Numbers in a pack made at the commit, and new ones.
    const last = range(PACK_AT_COMMIT + 5, PACK_AT_COMMIT + 30);
    expect(await storeAll(up, last)).toEqual([...Array(8).fill("skipped"), ...Array(last.length - 8).fill("ok")]);
    const all = range(1, PACK_AT_COMMIT + 30);
    expect(await served(up.sessionId)).toEqual(texts(all));
    expect(await sequencesOf(t.call, up.sessionId)).toMatchObject([
      { received_chunks_count: all.length, received_data_points: all.length },
    ]);
    if (onPostgres()) {
      const packs = await t.peer.svc.db.all<{ first: number; last: number | null }>(
        "SELECT sequence_number AS first, last_number AS last FROM meas_chunks WHERE measurement_uuid = ? ORDER BY sequence_number",
        [up.sessionId],
      );
      expect(packs).toEqual([
        { first: 1, last: PACK_AT_COMMIT - 2 },
        { first: PACK_AT_COMMIT - 1, last: PACK_AT_COMMIT + 12 },
        { first: PACK_AT_COMMIT + 13, last: PACK_AT_COMMIT + 30 },
      ]);
    }
  });

  it("writes the streams of one commit each where it belongs: packs for the one with enough chunks, the log for the other", async () => {
    const busy = stream();
    // In one lane, so in one commit (PostgreSQL commits each lane of measurements on its own).
    let quiet = stream();
    while (commitLane(quiet.sessionId, POSTGRES_LANES) !== commitLane(busy.sessionId, POSTGRES_LANES)) quiet = stream();
    let answers: string[][] = [];
    expect(
      await written(async () => (answers = await Promise.all([storeAll(busy, range(1, 20)), storeAll(quiet, [1, 2])]))),
    ).toEqual([onPostgres() ? "packs+log" : "log"]);
    expect(answers).toEqual([Array(20).fill("ok"), ["ok", "ok"]]);
    expect(await served(busy.sessionId)).toEqual(texts(range(1, 20)));
    expect(await served(quiet.sessionId)).toEqual(texts([1, 2]));
    // Both stay taken.
    expect(await Promise.all([storeAll(busy, [20, 21]), storeAll(quiet, [2, 3])])).toEqual([
      ["skipped", "ok"],
      ["skipped", "ok"],
    ]);
  });

  it("stores a stream given as two objects in one commit (resumed meanwhile), each with enough chunks, once per number", async () => {
    const up = stream();
    const again = { ...up, sessionId: up.sessionId.toUpperCase() };
    const [a, b] = await Promise.all([storeAll(up, range(1, 12)), storeAll(again, range(9, 20))]);
    expect([...a, ...b].filter((r) => r === "ok")).toHaveLength(20);
    expect(await served(up.sessionId)).toEqual(texts(range(1, 20)));
    expect(await sequencesOf(t.call, up.sessionId)).toMatchObject([
      { received_chunks_count: 20, received_data_points: 20 },
    ]);
  });

  it("sends a steady commit as three statements inside its transaction: the measurement rows, the chunks, the tally", async () => {
    const up = stream();
    expect(await storeAll(up, range(1, 3))).toEqual(["ok", "ok", "ok"]);
    const counted = countCommits(t.peer.svc.db, () => upstream().drain());
    try {
      expect(await storeAll(up, range(4, 30))).toEqual(Array(27).fill("ok"));
      // SQLite: also the numbers stored before (read beside the measurement rows), and the tally as three
      // statements that its thread runs with the insert; PostgreSQL: each statement is a round trip.
      expect(await counted.commits()).toEqual([onPostgres() ? 3 : 5]);
    } finally {
      counted.restore();
    }
  });
});
