// Real-time chunks are appended to the chunk log and moved into the chunk tables by a compaction a moment later
// (repo/chunk-log.ts). What the API shows must not depend on where a chunk is at the time: the data endpoint
// reads both, in time order; a number stored in real time is skipped by a REST upload of the same chunk and
// counted once; a peer stopped with rows in the log serves them after a restart and compacts them.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import type { UpstreamChunkIn, UpstreamRef } from "../../../cloud/measurements/ingest/upstream-store.js";
import { startTestPeer } from "../harness.js";
import { dropTestDatabase, onPostgres } from "../../support/test-database.js";
import { compactLog } from "../../../cloud/measurements/repo/chunk-log.js";
import { measurementLock } from "../../../cloud/measurements/service/model.js";
import {
  adminCall,
  chunksMessage,
  DEFAULT_PROJECT,
  EDGE,
  ndjson,
  P,
  uploadProto,
  uuid,
  withPeer,
  DIRECT_COMMIT,
} from "./helpers.js";

const chunk = (n: number, elapsedMs: number, text: string): UpstreamChunkIn => ({
  sequenceNumber: n,
  dataPointGroups: [
    {
      dataId: { name: "v", type: "t" },
      dataPoints: [{ elapsedTime: BigInt(elapsedMs) * 1_000_000n, payload: Buffer.from(text) }],
    },
  ],
});
const stream = (session: string = uuid()): UpstreamRef => ({
  streamId: uuid(),
  sessionId: session,
  projectUuid: DEFAULT_PROJECT,
  nodeId: EDGE,
  persist: true,
});

describe("measurements: the chunk log", () => {
  const t = withPeer(DIRECT_COMMIT);
  const store = (up: UpstreamRef, c: UpstreamChunkIn) => t.peer.svc.measurements.upstream.storeChunk(up, c);
  const logRows = async () => (await t.peer.svc.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM meas_chunk_log"))!.n;
  const texts = async (m: string, order = "") =>
    ndjson((await t.call(`${P}/data?name=${m}${order}`)).body as string).map((l) =>
      Buffer.from(l.data.d, "base64").toString(),
    );

  it("serves the points of two interleaved streams in time order from the log, and the same once compacted", async () => {
    const a = stream();
    const b = stream(a.sessionId);
    expect(await Promise.all([store(a, chunk(1, 10, "a10")), store(b, chunk(1, 5, "b5"))])).toEqual(["ok", "ok"]);
    expect(await Promise.all([store(a, chunk(2, 30, "a30")), store(b, chunk(2, 20, "b20"))])).toEqual(["ok", "ok"]);
    const asc = ["b5", "a10", "b20", "a30"];
    expect(await texts(a.sessionId)).toEqual(asc);
    expect(await texts(a.sessionId, "&order=desc")).toEqual([...asc].reverse());
    await t.peer.svc.measurements.upstream.drain();
    expect(await logRows()).toBe(0);
    expect(await texts(a.sessionId)).toEqual(asc);
    expect(await texts(a.sessionId, "&order=desc")).toEqual([...asc].reverse());
  });

  // Several instances append to one log on PostgreSQL; SQLite has one.
  if (onPostgres())
    it("moves in a compaction of some measurements only their rows, leaving the others' (PostgreSQL)", async () => {
      const a = stream();
      const b = stream();
      expect(await Promise.all([store(a, chunk(1, 10, "a10")), store(b, chunk(1, 10, "b10"))])).toEqual(["ok", "ok"]);
      await t.peer.svc.measurements.upstream.drain();
      expect(await Promise.all([store(a, chunk(2, 20, "a20")), store(b, chunk(2, 20, "b20"))])).toEqual(["ok", "ok"]);
      // Before this peer's own compaction is due: as another instance's compaction of a's measurement would.
      const part = { slice: 0, of: 1, measurements: [a.sessionId] };
      expect(await t.peer.svc.db.transaction((tx) => compactLog(tx, part), measurementLock(a.sessionId))).toBe(1);
      const left = await t.peer.svc.db.all<{ m: string }>("SELECT measurement_uuid AS m FROM meas_chunk_log");
      expect(left.map((r) => r.m)).toEqual([b.sessionId]);
      expect(await texts(b.sessionId)).toEqual(["b10", "b20"]);
    });

  it("skips in a REST upload the numbers stored in real time, and counts each chunk once", async () => {
    const up = stream();
    expect(await Promise.all([1, 2].map((n) => store(up, chunk(n, n, `rt${n}`))))).toEqual(["ok", "ok"]);
    const upload = chunksMessage(
      up.sessionId,
      up.streamId,
      [1, 2, 3].map((n) => [
        { name: "v", type: "t", elapsed: BigInt(n) * 1_000_000n, payload: Buffer.from(`rest${n}`) },
      ]),
    );
    const r = await uploadProto(t.call, upload);
    expect(r.body.items).toEqual([
      { sequence_number: 1, result: "skipped" },
      { sequence_number: 2, result: "skipped" },
      { sequence_number: 3, result: "ok" },
    ]);
    const seq = (await t.call(`${P}/measurements/${up.sessionId}/sequences`)).body.items as Array<
      Record<string, unknown>
    >;
    expect(seq).toMatchObject([{ received_chunks_count: 3, received_data_points: 3 }]);
    expect(await texts(up.sessionId)).toEqual(["rt1", "rt2", "rest3"]);
    // And the other way round: a number the REST upload stored is skipped in real time.
    expect(await store(up, chunk(3, 3, "late"))).toBe("skipped");
    expect(await store(up, chunk(4, 4, "rt4"))).toBe("ok");
    expect(await texts(up.sessionId)).toEqual(["rt1", "rt2", "rest3", "rt4"]);
  });

  it("stores a stream given as two objects in one commit (resumed meanwhile) once per number", async () => {
    const up = stream();
    const again = { ...up, sessionId: up.sessionId.toUpperCase() };
    const results = await Promise.all([
      store(up, chunk(1, 1, "a1")),
      store(again, chunk(2, 2, "b2")),
      store(up, chunk(3, 3, "a3")),
      store(again, chunk(1, 1, "b1")),
    ]);
    expect(results.filter((r) => r === "ok")).toHaveLength(3);
    expect(results[3]).toBe(results[0] === "ok" ? "skipped" : "ok");
    expect(await texts(up.sessionId)).toHaveLength(3);
    const seq = (await t.call(`${P}/measurements/${up.sessionId}/sequences`)).body.items as Array<
      Record<string, unknown>
    >;
    expect(seq).toMatchObject([{ received_chunks_count: 3, received_data_points: 3 }]);
  });
});

describe("measurements: a chunk log left by a stopped peer", () => {
  it("is served after a restart, compacted, and its numbers stay taken", async () => {
    let peer = await startTestPeer({ config: DIRECT_COMMIT });
    const dataDir = peer.dataDir;
    try {
      const up = stream();
      const store = (c: UpstreamChunkIn) => peer.svc.measurements.upstream.storeChunk(up, c);
      expect(await store(chunk(1, 1, "one"))).toBe("ok");
      expect(await store(chunk(2, 2, "two"))).toBe("ok");
      // Rows still in the log, as a peer killed before its compaction leaves them: the log copied back after a
      // clean stop (which compacts).
      const logged = await peer.svc.db.all<Record<string, unknown>>("SELECT * FROM meas_chunk_log ORDER BY id");
      expect(logged.length).toBeGreaterThan(0);
      await peer.close();
      peer = await startTestPeer({ dataDir, config: DIRECT_COMMIT });
      await peer.svc.db.run("DELETE FROM meas_chunk_log");
      await peer.svc.db.run(
        `DELETE FROM meas_chunk_payloads WHERE sequence_id = ? AND sequence_number IN (${logged.map(() => "?").join(", ")})`,
        [Number(logged[0]!.sequence_id), ...logged.map((r) => Number(r.sequence_number))],
      );
      await peer.svc.db.run(
        `DELETE FROM meas_chunks WHERE sequence_id = ? AND sequence_number IN (${logged.map(() => "?").join(", ")})`,
        [Number(logged[0]!.sequence_id), ...logged.map((r) => Number(r.sequence_number))],
      );
      for (const r of logged) {
        const cols = Object.keys(r);
        await peer.svc.db.run(
          `INSERT INTO meas_chunk_log (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
          cols.map((c) => r[c] as never),
        );
      }
      const call = await adminCall(peer);
      const texts = async () =>
        ndjson((await call(`${P}/data?name=${up.sessionId}`)).body as string).map((l) =>
          Buffer.from(l.data.d, "base64").toString(),
        );
      expect(await texts()).toEqual(["one", "two"]);
      const again = (c: UpstreamChunkIn) => peer.svc.measurements.upstream.storeChunk(up, c);
      expect(await again(chunk(2, 2, "dup"))).toBe("skipped");
      expect(await again(chunk(3, 3, "three"))).toBe("ok");
      await peer.svc.measurements.upstream.drain();
      expect((await peer.svc.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM meas_chunk_log"))!.n).toBe(0);
      expect(await texts()).toEqual(["one", "two", "three"]);
    } finally {
      await peer.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
      await dropTestDatabase(dataDir);
    }
  });
});
