// A re-sent chunk (same stream, same sequence number) is acked but neither relayed nor stored twice,
// and its ack never claims more than the original's storage did: it waits for a store still running
// and retries one that failed.
import { afterEach, describe, expect, it } from "vitest";
import { ResultCode } from "../../../proto/wire/message.js";
import type { UpstreamChunkData } from "../../../cloud/iscp/broker/options.js";
import { startTestBroker, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { ALL, connected, NODE_U, type Raw } from "../../support/iscp-raw-peer.js";

const chunk = (seq: number) => ({
  upstreamChunk: {
    streamIdAlias: 1,
    streamChunk: {
      sequenceNumber: seq,
      dataPointGroups: [{ dataId: { name: "n", type: "t" }, dataPoints: [{ payload: new Uint8Array([seq]) }] }],
    },
  },
});
const results = (r: Raw) =>
  r.msgs
    .filter((m) => m.upstreamChunkAck)
    .flatMap((m) => m.upstreamChunkAck!.results ?? [])
    .map((x) => [x.sequenceNumber, x.resultCode ?? 0]);

describe("duplicate upstream chunks", () => {
  let b: TestBroker;
  afterEach(async () => b?.close());

  async function setup(hook: (c: UpstreamChunkData) => Promise<void>) {
    b = await startTestBroker({ onUpstreamChunk: (_i, c) => hook(c) });
    const down = await connected(b, { nodeId: "reader" });
    down.send({
      downstreamOpenRequest: {
        requestId: 2,
        desiredStreamIdAlias: 1,
        downstreamFilters: [{ sourceNodeId: NODE_U, dataFilters: ALL }],
      },
    });
    await down.next("downstreamOpenResponse");
    const up = await connected(b);
    up.send({ upstreamOpenRequest: { requestId: 2, sessionId: "s", ackInterval: 0, qos: 1 } });
    await up.next("upstreamOpenResponse");
    return { up, down };
  }

  it("acks a duplicate of a chunk still being stored only once that store has committed", async () => {
    let release!: () => void;
    const stored: number[] = [];
    const { up, down } = await setup(async (c) => {
      await new Promise<void>((r) => (release = r));
      stored.push(c.sequenceNumber);
    });
    up.send(chunk(1));
    await waitFor(() => typeof release === "function", 30_000, "store started");
    up.send(chunk(1)); // e.g. re-sent after a resume while the first copy is still being written
    await new Promise((r) => setTimeout(r, 200));
    expect(results(up)).toEqual([]); // nothing is acked before the commit
    release();
    await waitFor(() => results(up).length === 2, 30_000, "acks");
    expect(results(up)).toEqual([
      [1, ResultCode.SUCCEEDED],
      [1, ResultCode.SUCCEEDED],
    ]);
    expect(stored).toEqual([1]);
    expect(down.msgs.filter((m) => m.downstreamChunk)).toHaveLength(1);
    up.ws.close();
    down.ws.close();
  });

  it("stores a duplicate of a chunk whose store failed, without relaying it again", async () => {
    let calls = 0;
    const stored: number[] = [];
    const { up, down } = await setup(async (c) => {
      if (++calls === 1) throw new Error("disk full");
      stored.push(c.sequenceNumber);
    });
    up.send(chunk(1));
    await waitFor(() => results(up).length === 1, 30_000, "first ack");
    expect(results(up)).toEqual([[1, ResultCode.PROCESS_FAILED]]);
    up.send(chunk(1));
    await waitFor(() => results(up).length === 2, 30_000, "second ack");
    expect(results(up)[1]).toEqual([1, ResultCode.SUCCEEDED]);
    expect(stored).toEqual([1]);
    up.send(chunk(1)); // now a plain duplicate: acked, not stored again
    await waitFor(() => results(up).length === 3, 30_000, "third ack");
    expect(results(up)[2]).toEqual([1, ResultCode.SUCCEEDED]);
    expect(stored).toEqual([1]);
    expect(down.msgs.filter((m) => m.downstreamChunk)).toHaveLength(1);
    up.ws.close();
    down.ws.close();
  });

  it("refuses sequence number 0 instead of acking it as a duplicate it never stored", async () => {
    const stored: number[] = [];
    const { up, down } = await setup(async (c) => void stored.push(c.sequenceNumber));
    up.send(chunk(0));
    up.send(chunk(1));
    await waitFor(() => results(up).length === 2, 30_000, "acks");
    expect(results(up)).toEqual([
      [0, ResultCode.PROTOCOL_ERROR],
      [1, ResultCode.SUCCEEDED],
    ]);
    expect(stored).toEqual([1]);
    await waitFor(() => down.msgs.some((m) => m.downstreamChunk), 30_000, "relay");
    expect(
      down.msgs.filter((m) => m.downstreamChunk).map((m) => m.downstreamChunk!.streamChunk!.sequenceNumber),
    ).toEqual([1]);
    up.ws.close();
    down.ws.close();
  });
});
