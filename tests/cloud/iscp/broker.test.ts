// Broker behaviour seen from a raw WebSocket peer: handshake refusals, protocol errors, limits,
// and the backpressure policy for slow downstreams.
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { encodeMessage, iscp2, QoS, ResultCode, type Message } from "../../../proto/wire/message.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { startTestBroker, TOKEN, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { ALL, connected, connectReq, NODE_U, raw } from "../../support/iscp-raw-peer.js";

describe("broker protocol handling", () => {
  let b: TestBroker;
  afterEach(async () => b?.close());

  it("refuses unknown compressions and encodings at the HTTP upgrade", async () => {
    b = await startTestBroker();
    await expect(raw(b, "enc=proto&comp=brotli&clevel=6")).rejects.toThrow("HTTP 400");
    await expect(raw(b, "enc=xml")).rejects.toThrow("HTTP 400");
  });

  it("answers bad handshakes with result codes", async () => {
    b = await startTestBroker();
    const cases: [Partial<iscp2.IConnectRequest>, number][] = [
      [{ extensionFields: { accessToken: "nope" } }, ResultCode.AUTH_FAILED],
      [{ protocolVersion: "1.0.0" }, ResultCode.INCOMPATIBLE_VERSION],
      [{ pingTimeout: 1000 }, ResultCode.TOO_LONG_PING_TIMEOUT],
    ];
    for (const [o, code] of cases) {
      const r = await raw(b);
      r.send(connectReq(o));
      expect((await r.next("connectResponse")).connectResponse!.resultCode).toBe(code);
      await r.closed;
    }
    const v3 = await raw(b);
    v3.send(connectReq({ protocolVersion: "3.0.0", requestId: 6 }));
    const ok = (await v3.next("connectResponse")).connectResponse!;
    expect([ok.requestId, ok.resultCode, ok.protocolVersion]).toEqual([6, 0, "2.0.0"]);
    v3.ws.close();
  });

  it("answers CONNECT_TIMEOUT when the authenticator does not answer in time", async () => {
    b = await startTestBroker({ authenticate: () => new Promise(() => {}), limits: { connectTimeoutMs: 200 } });
    const r = await raw(b);
    r.send(connectReq());
    expect((await r.next("connectResponse")).connectResponse!.resultCode).toBe(ResultCode.CONNECT_TIMEOUT);
    await r.closed;
    const silent = await raw(b);
    expect((await silent.next("disconnect")).disconnect!.resultCode).toBe(ResultCode.CONNECT_TIMEOUT);
  });

  it("disconnects on protocol errors and malformed frames, ignores text frames", async () => {
    b = await startTestBroker();
    const first = await raw(b);
    first.send({ ping: { requestId: 0 } });
    expect((await first.next("disconnect")).disconnect!.resultCode).toBe(ResultCode.PROTOCOL_ERROR);
    await first.closed;
    const bad = await raw(b);
    bad.send(connectReq());
    await bad.next("connectResponse");
    bad.ws.send("hello"); // text: ignored
    bad.send({ ping: { requestId: 2 } });
    expect((await bad.next("pong")).pong!.requestId).toBe(2);
    bad.ws.send(new Uint8Array([0xff, 0xff, 0xff]));
    expect((await bad.next("disconnect")).disconnect!.resultCode).toBe(ResultCode.MALFORMED_MESSAGE);
    await bad.closed;
    expect(bad.texts).toBe(0);
  });

  it("pings with odd request ids and drops a peer that does not answer", async () => {
    b = await startTestBroker({ limits: { serverPingTimeoutFloorSec: 1 } });
    const r = await raw(b);
    r.send(connectReq({ pingInterval: 1, pingTimeout: 1 }));
    await r.next("connectResponse");
    const ping = await r.next("ping", 3000);
    expect(ping.ping!.requestId! % 2).toBe(1);
    expect((await r.next("disconnect", 4000)).disconnect!.resultCode).toBe(ResultCode.PING_TIMEOUT);
  });

  it("refuses requests beyond the configured limits", async () => {
    b = await startTestBroker({
      limits: {
        maxUpstreamsPerConn: 1,
        maxAckIntervalMs: 1000,
        maxExpiryIntervalSec: 60,
        maxDownstreamFilters: 1,
        maxDataFiltersPerFilter: 1,
        maxDataIdAliases: 2,
      },
    });
    const r = await raw(b);
    r.send(connectReq());
    await r.next("connectResponse");
    const open = async (o: Partial<iscp2.IUpstreamOpenRequest>, id: number) => {
      r.send({ upstreamOpenRequest: { requestId: id, sessionId: "s", ...o } });
      const resp = (await r.next("upstreamOpenResponse")).upstreamOpenResponse!;
      expect(resp.requestId).toBe(id);
      expect(resp.assignedStreamId).toHaveLength(16);
      return resp.resultCode ?? 0;
    };
    expect(await open({ ackInterval: 5000 }, 2)).toBe(ResultCode.TOO_LONG_ACK_INTERVAL);
    expect(await open({ expiryInterval: 61 }, 4)).toBe(ResultCode.TOO_LONG_EXPIRY_INTERVAL);
    expect(await open({ qos: 7 as iscp2.QoS }, 6)).toBe(ResultCode.DESIRED_QOS_NOT_SUPPORTED);
    expect(
      await open(
        {
          dataIds: [
            { name: "a", type: "t" },
            { name: "b", type: "t" },
            { name: "c", type: "t" },
          ],
        },
        8,
      ),
    ).toBe(ResultCode.TOO_MANY_DATA_ID_ALIASES);
    expect(await open({ dataIds: [{ name: "", type: "t" }] }, 10)).toBe(ResultCode.INVALID_DATA_ID);
    expect(await open({}, 12)).toBe(ResultCode.SUCCEEDED);
    expect(await open({}, 14)).toBe(ResultCode.TOO_MANY_STREAMS);

    const down = async (o: Partial<iscp2.IDownstreamOpenRequest>, id: number) => {
      r.send({
        downstreamOpenRequest: {
          requestId: id,
          desiredStreamIdAlias: 1,
          downstreamFilters: [{ sourceNodeId: NODE_U, dataFilters: ALL }],
          ...o,
        },
      });
      return (await r.next("downstreamOpenResponse")).downstreamOpenResponse!.resultCode ?? 0;
    };
    expect(
      await down({ downstreamFilters: [{ sourceNodeId: NODE_U, dataFilters: [{ name: "a/#/b", type: "#" }] }] }, 16),
    ).toBe(ResultCode.INVALID_DATA_FILTER);
    expect(await down({ downstreamFilters: [{ sourceNodeId: "", dataFilters: ALL }] }, 18)).toBe(
      ResultCode.INVALID_DATA_FILTER,
    );
    expect(
      await down(
        {
          downstreamFilters: [
            { sourceNodeId: "a", dataFilters: ALL },
            { sourceNodeId: "b", dataFilters: ALL },
          ],
        },
        20,
      ),
    ).toBe(ResultCode.TOO_MANY_DOWNSTREAM_FILTERS);
    expect(await down({ downstreamFilters: [{ sourceNodeId: "a", dataFilters: [...ALL, ...ALL] }] }, 22)).toBe(
      ResultCode.TOO_MANY_DATA_FILTERS,
    );
    expect(await down({ desiredStreamIdAlias: 0 }, 24)).toBe(ResultCode.PROTOCOL_ERROR);
    expect(await down({}, 26)).toBe(ResultCode.SUCCEEDED);
    expect(await down({}, 28)).toBe(ResultCode.PROTOCOL_ERROR); // alias 1 in use

    // Unknown streams and aliases.
    r.send({ upstreamResumeRequest: { requestId: 30, streamId: new Uint8Array(16) } });
    expect((await r.next("upstreamResumeResponse")).upstreamResumeResponse!.resultCode).toBe(
      ResultCode.STREAM_NOT_FOUND,
    );
    r.send({ upstreamChunk: { streamIdAlias: 99, streamChunk: { sequenceNumber: 1 } } });
    expect((await r.next("upstreamChunkAck")).upstreamChunkAck!.results![0]!.resultCode).toBe(
      ResultCode.STREAM_NOT_FOUND,
    );
    r.send({
      upstreamChunk: {
        streamIdAlias: 1,
        streamChunk: { sequenceNumber: 1, dataPointGroups: [{ dataIdAlias: 42, dataPoints: [] }] },
      },
    });
    expect((await r.next("upstreamChunkAck")).upstreamChunkAck!.results![0]!.resultCode).toBe(
      ResultCode.INVALID_DATA_ID_ALIAS,
    );
    r.ws.close();
  });

  it("bounds the aliases a downstream may declare in its acks (TOO_MANY_DATA_ID_ALIASES)", async () => {
    b = await startTestBroker({ limits: { maxDataIdAliases: 3 } });
    const r = await connected(b, { nodeId: "reader" });
    r.send({
      downstreamOpenRequest: {
        requestId: 2,
        desiredStreamIdAlias: 1,
        downstreamFilters: [{ sourceNodeId: NODE_U, dataFilters: ALL }],
        dataIdAliases: { 1: { name: "a", type: "t" } },
      },
    });
    await r.next("downstreamOpenResponse");
    const ds = () => [...b.broker.hub.downstreams.values()][0]!;
    const ack = (ackId: number, names: string[], streams: number) => {
      const dataIdAliases = Object.fromEntries(names.map((n, i) => [10 * ackId + i, { name: n, type: "t" }]));
      const upstreamAliases = Object.fromEntries(
        Array.from({ length: streams }, (_, i) => {
          const id = new Uint8Array(16).fill(ackId * 16 + i);
          id[6] = 0x40;
          id[8] = 0x80; // a v4 UUID
          return [10 * ackId + i, { sessionId: "s", streamId: id, sourceNodeId: NODE_U }];
        }),
      );
      r.send({ downstreamChunkAck: { streamIdAlias: 1, ackId, dataIdAliases, upstreamAliases } });
    };
    ack(1, ["b", "c"], 2); // 3 data-ID aliases and 2 upstream aliases: within the limit
    expect((await r.next("downstreamChunkAckComplete")).downstreamChunkAckComplete!.resultCode ?? 0).toBe(
      ResultCode.SUCCEEDED,
    );
    ack(2, ["a", "d", "e"], 2); // "a" is known; "d" fits, "e" does not; one upstream alias fits
    const refused = (await r.next("downstreamChunkAckComplete")).downstreamChunkAckComplete!;
    expect([refused.ackId, refused.resultCode]).toEqual([2, ResultCode.TOO_MANY_DATA_ID_ALIASES]);
    expect([ds().dataIdAliases.size, ds().upstreamAliases.size]).toEqual([3, 3]);
    r.ws.close();
  });

  it("answers a resume of a stream attached to a live connection with RESUME_REQUEST_CONFLICT", async () => {
    b = await startTestBroker();
    const a = await raw(b);
    a.send(connectReq());
    await a.next("connectResponse");
    a.send({ upstreamOpenRequest: { requestId: 2, sessionId: "s" } });
    const id = (await a.next("upstreamOpenResponse")).upstreamOpenResponse!.assignedStreamId!;
    const c = await raw(b);
    c.send(connectReq());
    await c.next("connectResponse");
    c.send({ upstreamResumeRequest: { requestId: 2, streamId: id } });
    expect((await c.next("upstreamResumeResponse")).upstreamResumeResponse!.resultCode).toBe(
      ResultCode.RESUME_REQUEST_CONFLICT,
    );
    a.ws.terminate();
    await waitFor(() => b.broker.connections().length === 1, 30_000, "old connection gone");
    c.send({ upstreamResumeRequest: { requestId: 4, streamId: id } });
    const ok = (await c.next("upstreamResumeResponse")).upstreamResumeResponse!;
    expect([ok.resultCode, ok.assignedStreamIdAlias]).toEqual([ResultCode.SUCCEEDED, 1]);
    a.ws.close();
    c.ws.close();
  });

  it("survives mutated client messages (fuzz) and keeps serving", async () => {
    const internalErrors: string[] = [];
    b = await startTestBroker({
      logger: {
        debug() {},
        info() {},
        warn: (o, msg) => void (msg === "iscp request failed" && internalErrors.push(JSON.stringify(o))),
      },
    });
    const valid: Message[] = [
      { upstreamOpenRequest: { requestId: 2, sessionId: "s", dataIds: [{ name: "a", type: "t" }], qos: QoS.RELIABLE } },
      {
        upstreamChunk: {
          streamIdAlias: 1,
          streamChunk: {
            sequenceNumber: 1,
            dataPointGroups: [{ dataIdAlias: 1, dataPoints: [{ payload: new Uint8Array(4) }] }],
          },
          dataIds: [{ name: "b", type: "t" }],
        },
      },
      {
        downstreamOpenRequest: {
          requestId: 4,
          desiredStreamIdAlias: 1,
          downstreamFilters: [{ sourceNodeId: NODE_U, dataFilters: ALL }],
          dataIdAliases: { 1: { name: "a", type: "t" } },
        },
      },
      {
        downstreamChunkAck: {
          streamIdAlias: 1,
          ackId: 1,
          results: [{ streamIdOfUpstream: new Uint8Array(16), sequenceNumberInUpstream: 1 }],
          upstreamAliases: { 1: { streamId: new Uint8Array(16) } },
        },
      },
      { upstreamMetadata: { requestId: 6, baseTime: { sessionId: "s", name: "m", priority: 1 } } },
      { upstreamResumeRequest: { requestId: 8, streamId: new Uint8Array(16) } },
      { downstreamResumeRequest: { requestId: 10, streamId: new Uint8Array(16), desiredStreamIdAlias: 2 } },
      { upstreamCloseRequest: { requestId: 12, streamId: new Uint8Array(16) } },
      { downstreamCloseRequest: { requestId: 14, streamId: new Uint8Array(16) } },
      { upstreamCall: { callId: "c", destinationNodeId: NODE_U, payload: new Uint8Array(3) } },
    ];
    let seed = 42;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    let r = await raw(b);
    r.send(connectReq());
    await r.next("connectResponse");
    for (let i = 0; i < 400; i++) {
      if (r.ws.readyState !== WebSocket.OPEN) {
        r = await raw(b);
        r.send(connectReq());
        await r.next("connectResponse");
      }
      const frame = encodeMessage(valid[rnd(valid.length)]!, "proto");
      for (let k = 0; k < 1 + rnd(3); k++) frame[rnd(frame.length)] = rnd(256);
      r.ws.send(frame);
      if (i % 20 === 0) await new Promise((res) => setTimeout(res, 5));
    }
    r.ws.terminate();
    const ok = await raw(b);
    ok.send(connectReq());
    expect((await ok.next("connectResponse")).connectResponse!.resultCode ?? 0).toBe(ResultCode.SUCCEEDED);
    ok.ws.close();
    expect(internalErrors).toEqual([]); // every bad input met a validation path, none an exception
  });

  it("drops the oldest chunks of a slow downstream without holding back the upstream or other downstreams", async () => {
    const queueBytes = 4 * 1024 * 1024;
    b = await startTestBroker({ limits: { downstreamQueueBytes: queueBytes, transportHighWaterBytes: 256 * 1024 } });
    // A slow reader: opens a downstream, then stops reading its socket.
    const slow = await raw(b);
    slow.send(connectReq({ nodeId: "slow" }));
    await slow.next("connectResponse");
    slow.send({
      downstreamOpenRequest: {
        requestId: 2,
        desiredStreamIdAlias: 1,
        downstreamFilters: [{ sourceNodeId: NODE_U, dataFilters: ALL }],
        qos: QoS.RELIABLE,
      },
    });
    await slow.next("downstreamOpenResponse");
    slow.ws.pause();
    const fast = await IscpClient.connect({
      transport: () => connectWebSocket({ url: b.url }),
      token: TOKEN,
      nodeId: "fast",
    });
    const fds = await fast.openDownstream({ filters: [{ sourceNodeId: NODE_U, dataFilters: ALL }] });
    let fastChunks = 0;
    fds.onChunk(() => fastChunks++);
    const u = await IscpClient.connect({
      transport: () => connectWebSocket({ url: b.url }),
      token: TOKEN,
      nodeId: NODE_U,
    });
    const us = await u.openUpstream({ sessionId: "s", qos: QoS.RELIABLE });
    const total = 5000; // 20 MB: well beyond the slow peer's queue and socket buffers
    const payload = new Uint8Array(4096).fill(3);
    for (let i = 0; i < total; i++) {
      us.write({ name: "x", type: "bytes" }, [{ elapsedTime: i, payload }]);
      us.flush();
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 1)); // bursts well below the queue bound
    }
    expect(await us.waitAcked(10_000)).toBe(true); // upstream never waits for the slow reader
    await waitFor(() => fastChunks === total, 30_000, "fast downstream");
    const slowStats = Object.values(b.broker.stats().downstreams).find((d) => d.droppedChunks > 0)!;
    expect(slowStats).toBeDefined();
    expect(slowStats.queuedBytes).toBeLessThanOrEqual(queueBytes);
    expect(slowStats.sentChunks + slowStats.droppedChunks + slowStats.queuedChunks).toBe(total);
    // Once it reads again it gets the rest: what was sent plus what was still queued.
    slow.ws.resume();
    await waitFor(
      () => slow.msgs.filter((m) => m.downstreamChunk).length === slowStats.sentChunks + slowStats.queuedChunks,
      30_000,
      "slow drains",
    );
    const seqs = slow.msgs.filter((m) => m.downstreamChunk).map((m) => m.downstreamChunk!.streamChunk!.sequenceNumber!);
    expect(seqs.at(-1)).toBe(total);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    await Promise.allSettled([u.close(), fast.close()]);
    slow.ws.terminate();
  }, 120_000);
});
