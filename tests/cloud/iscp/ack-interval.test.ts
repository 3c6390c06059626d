// When the broker acks an upstream's chunks: a result goes out in the turn its chunk is stored, unless the stream
// was acked less than ack_interval ago; then the results wait for the interval's end, batched.
import { afterEach, describe, expect, it } from "vitest";
import { QoS } from "../../../proto/wire/message.js";
import { startTestBroker, type TestBroker } from "../../support/iscp-broker.js";
import { connected } from "../../support/iscp-raw-peer.js";

describe("upstream acks and ack_interval", () => {
  let b: TestBroker;
  afterEach(async () => b?.close());

  it("acks a result at once, then at most one ack per ack_interval with the results batched, for every QoS", async () => {
    b = await startTestBroker();
    const r = await connected(b);
    for (const [i, qos] of [QoS.UNRELIABLE, QoS.RELIABLE, QoS.PARTIAL].entries()) {
      r.send({ upstreamOpenRequest: { requestId: 2 + 2 * i, sessionId: "s", ackInterval: 1000, qos } });
      const alias = (await r.next("upstreamOpenResponse")).upstreamOpenResponse!.assignedStreamIdAlias!;
      const results = async () =>
        (await r.next("upstreamChunkAck")).upstreamChunkAck!.results!.map((x) => [x.sequenceNumber, x.resultCode ?? 0]);
      const t0 = Date.now();
      r.send({ upstreamChunk: { streamIdAlias: alias, streamChunk: { sequenceNumber: 1 } } });
      expect(await results()).toEqual([[1, 0]]);
      for (let seq = 2; seq <= 3; seq++)
        r.send({ upstreamChunk: { streamIdAlias: alias, streamChunk: { sequenceNumber: seq } } });
      expect(await results()).toEqual([
        [2, 0],
        [3, 0],
      ]);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(990); // the second ack waited for the interval since the first
    }
    expect(r.msgs.filter((m) => m.upstreamChunkAck)).toEqual([]);
    r.ws.close();
  });

  it("does not hold a lone result for a long ack_interval; a close sends what waits", async () => {
    b = await startTestBroker();
    const r = await connected(b);
    r.send({ upstreamOpenRequest: { requestId: 2, sessionId: "s", ackInterval: 30_000 } });
    const opened = (await r.next("upstreamOpenResponse")).upstreamOpenResponse!;
    const alias = opened.assignedStreamIdAlias!;
    r.send({ upstreamChunk: { streamIdAlias: alias, streamChunk: { sequenceNumber: 1 } } });
    expect((await r.next("upstreamChunkAck")).upstreamChunkAck!.results!.map((x) => x.sequenceNumber)).toEqual([1]);
    for (let seq = 2; seq <= 3; seq++)
      r.send({ upstreamChunk: { streamIdAlias: alias, streamChunk: { sequenceNumber: seq } } });
    r.send({ upstreamCloseRequest: { requestId: 4, streamId: opened.assignedStreamId, finalSequenceNumber: 3 } });
    await r.next("upstreamCloseResponse");
    const acks = r.msgs
      .filter((m) => m.upstreamChunkAck)
      .map((m) => m.upstreamChunkAck!.results!.map((x) => x.sequenceNumber));
    expect(acks).toEqual([[2, 3]]);
    r.ws.close();
  });
});
