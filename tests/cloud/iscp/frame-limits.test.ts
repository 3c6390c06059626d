// Every broker -> client frame stays within maxOutgoingFrameBytes (iscp-ts on Node 20 drops the
// connection above 1 MiB) without losing what the frame had to say: acks, alias tables and calls.
// Also the incoming-size and handshake limits that answer with their own result codes.
import { afterEach, describe, expect, it } from "vitest";
import { encodeMessage, ResultCode } from "../../../proto/wire/message.js";
import { startTestBroker, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { connected, connectReq, raw, type Raw } from "../../support/iscp-raw-peer.js";

const LIMIT = 2048;

function framesOf(r: Raw, kind: string) {
  return r.msgs.filter((m) => m.message === kind);
}

describe("broker frame limits", () => {
  let b: TestBroker;
  afterEach(async () => b?.close());

  it("spreads a long ack interval's results over several acks within the frame limit", async () => {
    b = await startTestBroker({ limits: { maxOutgoingFrameBytes: LIMIT } });
    const r = await connected(b);
    r.send({ upstreamOpenRequest: { requestId: 2, sessionId: "s", ackInterval: 300 } });
    await r.next("upstreamOpenResponse");
    const n = 600; // ~8 bytes per result: about 5 KB of results in one ack interval
    for (let seq = 1; seq <= n; seq++)
      r.send({ upstreamChunk: { streamIdAlias: 1, streamChunk: { sequenceNumber: seq } } });
    await waitFor(
      () => framesOf(r, "upstreamChunkAck").flatMap((m) => m.upstreamChunkAck!.results ?? []).length >= n,
      30_000,
      "all results",
    );
    const acks = framesOf(r, "upstreamChunkAck");
    expect(acks.length).toBeGreaterThan(1);
    for (const a of acks) expect(r.sizes.get(a)!).toBeLessThanOrEqual(LIMIT);
    expect(acks.flatMap((a) => a.upstreamChunkAck!.results!.map((x) => x.sequenceNumber))).toEqual(
      Array.from({ length: n }, (_, i) => i + 1),
    );
    r.ws.close();
  });

  it("spreads long data-ID aliases over several acks within the frame limit", async () => {
    b = await startTestBroker();
    const r = await connected(b);
    r.send({ upstreamOpenRequest: { requestId: 2, sessionId: "s", ackInterval: 0 } });
    await r.next("upstreamOpenResponse");
    // 5000 names of 300 bytes: 1.5 MB of new aliases, more than one 1 MiB frame can carry.
    const ids = Array.from({ length: 5000 }, (_, i) => ({ name: `${i}/`.padEnd(300, "x"), type: "t" }));
    r.send({
      upstreamChunk: {
        streamIdAlias: 1,
        streamChunk: { sequenceNumber: 1, dataPointGroups: [{ dataId: ids[0], dataPoints: [] }] },
        dataIds: ids,
      },
    });
    await waitFor(
      () =>
        framesOf(r, "upstreamChunkAck").reduce(
          (n, m) => n + Object.keys(m.upstreamChunkAck!.dataIdAliases ?? {}).length,
          0,
        ) >= 5000,
      30_000,
      "aliases",
    );
    const acks = framesOf(r, "upstreamChunkAck");
    expect(acks.length).toBeGreaterThan(1);
    for (const a of acks) expect(r.sizes.get(a)!).toBeLessThanOrEqual(1024 * 1024);
    expect(
      acks.flatMap((a) => a.upstreamChunkAck!.results ?? []).map((x) => [x.sequenceNumber, x.resultCode ?? 0]),
    ).toEqual([[1, 0]]);
    const all = Object.assign({}, ...acks.map((a) => a.upstreamChunkAck!.dataIdAliases));
    expect(all[5000]).toMatchObject({ name: ids[4999]!.name, type: "t" });
    r.ws.close();
  });

  it("answers an open whose alias table is too large for one frame and announces the rest in acks", async () => {
    b = await startTestBroker({ limits: { maxOutgoingFrameBytes: LIMIT } });
    const r = await connected(b);
    const ids = Array.from({ length: 300 }, (_, i) => ({ name: `sensor/${i}`, type: "float" }));
    r.send({ upstreamOpenRequest: { requestId: 2, sessionId: "s", ackInterval: 10, dataIds: ids } });
    const open = await r.next("upstreamOpenResponse");
    expect(open.upstreamOpenResponse!.resultCode ?? 0).toBe(ResultCode.SUCCEEDED);
    expect(r.sizes.get(open)!).toBeLessThanOrEqual(LIMIT);
    const count = () =>
      Object.keys(open.upstreamOpenResponse!.dataIdAliases ?? {}).length +
      framesOf(r, "upstreamChunkAck").reduce(
        (n, m) => n + Object.keys(m.upstreamChunkAck!.dataIdAliases ?? {}).length,
        0,
      );
    await waitFor(() => count() >= 300, 30_000, "every alias");
    for (const a of framesOf(r, "upstreamChunkAck")) expect(r.sizes.get(a)!).toBeLessThanOrEqual(LIMIT);
    const all = Object.assign(
      {},
      open.upstreamOpenResponse!.dataIdAliases,
      ...framesOf(r, "upstreamChunkAck").map((a) => a.upstreamChunkAck!.dataIdAliases),
    );
    expect(
      Object.keys(all)
        .map(Number)
        .sort((x, y) => x - y),
    ).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(all[300]).toMatchObject({ name: "sensor/299", type: "float" });
    r.ws.close();
  });

  it("refuses an E2E call too large for the destination's frames instead of dropping it silently", async () => {
    b = await startTestBroker({ limits: { maxOutgoingFrameBytes: LIMIT } });
    const callee = await connected(b, { nodeId: "callee" });
    const caller = await connected(b, { nodeId: "caller" });
    caller.send({
      upstreamCall: {
        callId: "big",
        destinationNodeId: "callee",
        name: "n",
        type: "t",
        payload: new Uint8Array(LIMIT),
      },
    });
    expect((await caller.next("upstreamCallAck")).upstreamCallAck).toMatchObject({
      callId: "big",
      resultCode: ResultCode.TOO_LARGE_MESSAGE_SIZE,
    });
    caller.send({
      upstreamCall: { callId: "small", destinationNodeId: "callee", name: "n", type: "t", payload: new Uint8Array(10) },
    });
    expect((await caller.next("upstreamCallAck")).upstreamCallAck!.resultCode ?? 0).toBe(ResultCode.SUCCEEDED);
    expect((await callee.next("downstreamCall")).downstreamCall!.callId).toBe("small");
    expect(framesOf(callee, "downstreamCall")).toEqual([]);
    caller.ws.close();
    callee.ws.close();
  });

  it("disconnects a client message above the incoming limit with TOO_LARGE_MESSAGE_SIZE", async () => {
    b = await startTestBroker({ limits: { maxIncomingMessageBytes: 64 * 1024 } });
    const r = await connected(b);
    const big = encodeMessage(
      { upstreamCall: { callId: "c", destinationNodeId: "x", payload: new Uint8Array(64 * 1024) } },
      "proto",
    );
    r.ws.send(big);
    expect((await r.next("disconnect")).disconnect!.resultCode).toBe(ResultCode.TOO_LARGE_MESSAGE_SIZE);
    await r.closed;
  });

  it("refuses short ping settings and node-less upstreams with their result codes", async () => {
    b = await startTestBroker({ limits: { minPingIntervalSec: 5, minPingTimeoutSec: 2 } });
    for (const [o, code] of [
      [{ pingInterval: 2 }, ResultCode.TOO_SHORT_PING_INTERVAL],
      [{ pingTimeout: 1 }, ResultCode.TOO_SHORT_PING_TIMEOUT],
    ] as const) {
      const r = await raw(b);
      r.send(connectReq({ ...{ pingInterval: 10, pingTimeout: 3 }, ...o }));
      expect((await r.next("connectResponse")).connectResponse!.resultCode).toBe(code);
      await r.closed;
    }
    const anon = await connected(b, { nodeId: "", pingTimeout: 3 });
    anon.send({ upstreamOpenRequest: { requestId: 2, sessionId: "s" } });
    expect((await anon.next("upstreamOpenResponse")).upstreamOpenResponse!.resultCode).toBe(ResultCode.NO_NODE_ID);
    anon.send({ upstreamMetadata: { requestId: 4, baseTime: { sessionId: "s", name: "manual", priority: 1 } } });
    expect((await anon.next("upstreamMetadataAck")).upstreamMetadataAck!.resultCode).toBe(ResultCode.NO_NODE_ID);
    anon.ws.close();
  });
});
