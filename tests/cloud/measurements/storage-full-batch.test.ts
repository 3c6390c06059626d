// A full database while a large batch is written (SQLITE_FULL, here from a page limit): every write that fails
// is answered (the chunks are refused, PROCESS_FAILED, nothing stored), none is left to reject unheard (an
// unhandled rejection ends the process), and the same chunks are stored once there is room. A batch of
// hundreds of chunks is written in parts, so the payload rows of one part fail while the next is written.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { UpstreamChunkIn, UpstreamRef } from "../../../cloud/measurements/ingest/upstream-store.js";
import { ResultCode } from "../../../proto/wire/message.js";
import { brokerChunkHook, P, persistedUpstream, sequencesOf, withPeer, DIRECT_COMMIT } from "./helpers.js";

const CHUNKS = 400;
const chunk = (n: number, size: number): UpstreamChunkIn => ({
  sequenceNumber: n,
  dataPointGroups: [
    {
      dataId: { name: "big", type: "t" },
      dataPoints: [{ elapsedTime: BigInt(n) * 1000n, payload: Buffer.alloc(size, n & 0xff) }],
    },
  ],
});

describe("measurements: a full disk under a large batch", () => {
  const t = withPeer(DIRECT_COMMIT);
  const unheard: unknown[] = [];
  const listen = (e: unknown) => void unheard.push(e);
  beforeEach(() => void process.on("unhandledRejection", listen));
  afterEach(() => void process.off("unhandledRejection", listen));
  const sequences = (m: string) => sequencesOf(t.call, m);

  /** A stream whose sequence exists (one small chunk stored), and a database with room for a few pages only. */
  async function fullStream(): Promise<UpstreamRef> {
    const up = persistedUpstream();
    expect(await t.peer.svc.measurements.upstream.storeChunk(up, chunk(1, 8))).toBe("ok");
    const { n } = (await t.peer.svc.db.get<{ n: number }>("SELECT page_count AS n FROM pragma_page_count()"))!;
    await t.peer.svc.db.exec(`PRAGMA max_page_count = ${n + 4}`);
    return up;
  }
  const room = () => t.peer.svc.db.exec("PRAGMA max_page_count = 1073741823");

  it("refuses every chunk of the batch, leaves no rejection unhandled, and stores them all once there is room", async () => {
    const up = await fullStream();
    const hook = brokerChunkHook(t.peer, up);
    const send = () => Promise.all(Array.from({ length: CHUNKS }, (_, i) => hook(chunk(i + 2, 8 * 1024))));
    for (let round = 0; round < 3; round++) {
      const refused = await send();
      expect(new Set(refused.map((r) => JSON.stringify(r)))).toEqual(
        new Set([
          JSON.stringify({ resultCode: ResultCode.PROCESS_FAILED, resultString: "the server's storage is full" }),
        ]),
      );
    }
    await new Promise((r) => setTimeout(r, 200)); // a rejection left unheard is reported on a later turn
    expect(unheard).toEqual([]);
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: 1 }]);
    await room();
    expect(await send()).toEqual(Array(CHUNKS).fill(undefined));
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: CHUNKS + 1 }]);
  });

  it("answers a REST upload to a full disk with 507, with no rejection unhandled, and takes it once there is room", async () => {
    const up = await fullStream();
    const body = {
      meas_uuid: up.sessionId,
      sequence_uuid: up.streamId,
      chunks: Array.from({ length: CHUNKS }, (_, i) => ({
        sequence_number: i + 2,
        data_point_groups: [
          {
            data_id: { type: "t", name: "big" },
            data_points: [{ elapsed_time: (i + 2) * 1000, payload: Buffer.alloc(8 * 1024, 1).toString("base64") }],
          },
        ],
      })),
    };
    const upload = () => t.call(`${P}/measurements/sequences/chunks`, { method: "POST", json: body });
    for (let round = 0; round < 3; round++)
      expect((await upload()).body).toMatchObject({ type: "insufficient_storage" });
    await new Promise((r) => setTimeout(r, 200));
    expect(unheard).toEqual([]);
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: 1 }]);
    await room();
    expect((await upload()).status).toBe(200);
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: CHUNKS + 1 }]);
  });
});
