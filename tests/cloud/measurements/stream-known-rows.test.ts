// The broker's chunk writer skips statements for rows it knows exist (a stream's sequence, listed data ids,
// the status while measuring). What the API shows must not depend on that: data ids arriving later are
// listed, a measurement deleted mid-stream is made again with its sequence, a failed batch stores nothing,
// and a full disk is answered PROCESS_FAILED (the agent keeps the chunk).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { UpstreamChunkIn, UpstreamRef } from "../../../cloud/measurements/ingest/upstream-store.js";
import { ResultCode } from "../../../proto/wire/message.js";
import { brokerChunkHook, P, persistedUpstream, sequencesOf, withPeer, DIRECT_COMMIT } from "./helpers.js";

const chunk = (n: number, ids: Array<[string, string]>): UpstreamChunkIn => ({
  sequenceNumber: n,
  dataPointGroups: ids.map(([name, type]) => ({
    dataId: { name, type },
    dataPoints: [{ elapsedTime: BigInt(n) * 1000n, payload: Buffer.from(`${name}@${n}`) }],
  })),
});

describe("measurements: a steady stream's chunk transactions", () => {
  const t = withPeer(DIRECT_COMMIT);
  const call = (path: string, init?: Parameters<typeof t.call>[1]) => t.call(path, init);
  const store = (up: UpstreamRef, c: UpstreamChunkIn) => t.peer.svc.measurements.upstream.storeChunk(up, c);
  const dataIds = async (m: string) =>
    ((await call(`${P}/data_ids?name=${m}`)).body.items as Array<{ data_id: string }>).map((d) => d.data_id).sort();
  const sequences = (m: string) => sequencesOf(t.call, m);

  it("lists data ids first seen in later chunks, and counts every chunk in its sequence", async () => {
    const up = persistedUpstream();
    expect(await store(up, chunk(1, [["a", "t"]]))).toBe("ok");
    expect(await store(up, chunk(2, [["a", "t"]]))).toBe("ok");
    expect(
      await store(
        up,
        chunk(3, [
          ["a", "t"],
          ["b", "t"],
        ]),
      ),
    ).toBe("ok");
    expect(await store(up, chunk(3, [["a", "t"]]))).toBe("skipped");
    expect(await dataIds(up.sessionId)).toEqual(["a", "b"]);
    expect(await sequences(up.sessionId)).toMatchObject([
      { uuid: up.streamId, received_chunks_count: 3, received_data_points: 4 },
    ]);
    expect((await call(`${P}/measurements/${up.sessionId}`)).body).toMatchObject({
      sequences: { status: "measuring" },
    });
  });

  it("makes a measurement deleted mid-stream again, with its sequence and data ids", async () => {
    const up = persistedUpstream();
    expect(await store(up, chunk(1, [["x", "t"]]))).toBe("ok");
    expect(await store(up, chunk(2, [["x", "t"]]))).toBe("ok");
    expect((await call(`${P}/measurements/${up.sessionId}`, { method: "DELETE" })).status).toBe(204);
    expect(await store(up, chunk(3, [["x", "t"]]))).toBe("ok");
    expect(
      await store(
        up,
        chunk(4, [
          ["x", "t"],
          ["y", "t"],
        ]),
      ),
    ).toBe("ok");
    expect(await dataIds(up.sessionId)).toEqual(["x", "y"]);
    expect(await sequences(up.sessionId)).toMatchObject([
      { uuid: up.streamId, received_chunks_count: 2, received_data_points: 3 },
    ]);
  });

  it("stores nothing of a batch whose transaction failed, and the stream goes on afterwards", async () => {
    const up = persistedUpstream();
    expect(await store(up, chunk(1, [["p", "t"]]))).toBe("ok");
    // A chunk the chunk log takes but whose new data id is refused fails the side-by-side writes.
    await t.peer.svc.db.exec(
      "CREATE TEMP TRIGGER refuse_payload BEFORE INSERT ON meas_data_ids WHEN NEW.data_name = 'q' BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    await expect(
      store(
        up,
        chunk(2, [
          ["p", "t"],
          ["q", "t"],
        ]),
      ),
    ).rejects.toThrow(/refused/);
    await t.peer.svc.db.exec("DROP TRIGGER refuse_payload");
    expect(await dataIds(up.sessionId)).toEqual(["p"]);
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: 1, received_data_points: 1 }]);
    expect(
      await store(
        up,
        chunk(2, [
          ["p", "t"],
          ["q", "t"],
        ]),
      ),
    ).toBe("ok");
    expect(await dataIds(up.sessionId)).toEqual(["p", "q"]);
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: 2, received_data_points: 3 }]);
  });

  it("answers a chunk the full disk refused with PROCESS_FAILED, stores nothing, and stores it once there is room", async () => {
    const up = persistedUpstream();
    expect(await store(up, chunk(1, [["small", "t"]]))).toBe("ok");
    const [seq] = (await sequences(up.sessionId)) as Array<{ uuid: string }>;
    const id = (await t.peer.svc.db.get<{ id: number }>("SELECT id FROM meas_sequences WHERE uuid = ?", [seq!.uuid]))!
      .id;
    const file = path.join(t.peer.dataDir, "chunks", `${id}.chunks`);
    fs.symlinkSync("/dev/full", file); // the first large payload opens this sequence's file
    const big: UpstreamChunkIn = {
      sequenceNumber: 2,
      dataPointGroups: [
        {
          dataId: { name: "big", type: "t" },
          dataPoints: [{ elapsedTime: 2000n, payload: Buffer.alloc(64 * 1024, 2) }],
        },
      ],
    };
    const hook = brokerChunkHook(t.peer, up);
    expect(await hook(big)).toEqual({
      resultCode: ResultCode.PROCESS_FAILED,
      resultString: "the server's storage is full",
    });
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: 1 }]);
    fs.unlinkSync(file);
    expect(await hook(big)).toBeUndefined();
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: 2 }]);
  });
});
