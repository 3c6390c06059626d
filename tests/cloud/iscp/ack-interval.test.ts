// When the broker acks an upstream's chunks: ack_interval ms after the first result waiting, every result of that
// interval in one ack, for every QoS.
import { afterEach, describe, expect, it } from "vitest";
import { QoS } from "../../../proto/wire/message.js";
import { startTestBroker, type TestBroker } from "../../support/iscp-broker.js";
import { connected } from "../../support/iscp-raw-peer.js";

describe("upstream acks and ack_interval", () => {
  let b: TestBroker;
  afterEach(async () => b?.close());

  it("acks chunks of every QoS in one batch per ack_interval", async () => {
    b = await startTestBroker();
    const r = await connected(b);
    for (const [i, qos] of [QoS.UNRELIABLE, QoS.RELIABLE, QoS.PARTIAL].entries()) {
      r.send({ upstreamOpenRequest: { requestId: 2 + 2 * i, sessionId: "s", ackInterval: 300, qos } });
      const alias = (await r.next("upstreamOpenResponse")).upstreamOpenResponse!.assignedStreamIdAlias!;
      const t0 = Date.now();
      for (let seq = 1; seq <= 3; seq++)
        r.send({ upstreamChunk: { streamIdAlias: alias, streamChunk: { sequenceNumber: seq } } });
      const ack = (await r.next("upstreamChunkAck")).upstreamChunkAck!;
      expect(Date.now() - t0).toBeGreaterThanOrEqual(250); // waited for the interval to batch
      expect([ack.streamIdAlias, ack.results!.map((x) => [x.sequenceNumber, x.resultCode ?? 0])]).toEqual([
        alias,
        [
          [1, 0],
          [2, 0],
          [3, 0],
        ],
      ]);
    }
    expect(r.msgs.filter((m) => m.upstreamChunkAck)).toEqual([]);
    r.ws.close();
  });
});
