// Interop with the published client @aptpod/iscp-ts 0.11.1 over ws:// against our broker.
import * as iscp from "@aptpod/iscp-ts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestBroker, TOKEN, waitFor, type TestBroker } from "../../support/iscp-broker.js";

const NODE_U = "11111111-1111-4111-8111-111111111111";
const NODE_D = "22222222-2222-4222-8222-222222222222";
const enc = new TextEncoder();
const dec = new TextDecoder();

type ConnOpts = {
  nodeId?: string;
  token?: string;
  encoding?: "proto" | "json";
  pingInterval?: number;
  pingTimeout?: number;
};

function connect(b: TestBroker, o: ConnOpts = {}): Promise<iscp.Conn> {
  return iscp.Conn.connect({
    address: b.address,
    connector: new iscp.WebSocketConnector({ enableTLS: false }),
    tokenSource: async () => o.token ?? TOKEN,
    nodeId: o.nodeId,
    encoding: o.encoding ?? "proto",
    pingInterval: o.pingInterval ?? 10,
    pingTimeout: o.pingTimeout ?? 1,
    logLevel: iscp.LOG_LEVEL.NONE,
  } as ConstructorParameters<typeof Object>[0]);
}

interface Received {
  name: string;
  type: string;
  elapsed: bigint;
  text: string;
  seq: number;
}

function collect(ds: iscp.Downstream): { points: Received[]; baseTimes: bigint[] } {
  const out = { points: [] as Received[], baseTimes: [] as bigint[] };
  ds.addEventListener(iscp.Downstream.EVENT.CHUNK, (c: iscp.DownstreamChunk) => {
    for (const g of c.dataPointGroups) {
      for (const p of g.dataPoints)
        out.points.push({
          name: g.dataId.name,
          type: g.dataId.type,
          elapsed: p.elapsedTime,
          text: dec.decode(p.payload),
          seq: c.sequenceNumber,
        });
    }
  });
  ds.addEventListener(iscp.Downstream.EVENT.METADATA, (m: iscp.DownstreamMetadata) => {
    if (m.metadata instanceof iscp.BaseTime) out.baseTimes.push(m.metadata.baseTime);
  });
  return out;
}

const point = (ns: bigint, text: string) => new iscp.DataPoint({ elapsedTime: ns, payload: enc.encode(text) });

describe("@aptpod/iscp-ts against the broker", () => {
  let b: TestBroker;
  const conns: iscp.Conn[] = [];
  beforeEach(async () => {
    b = await startTestBroker();
  });
  afterEach(async () => {
    await Promise.allSettled(conns.splice(0).map((c) => c.close()));
    await b.close();
  });

  for (const encoding of ["proto", "json"] as const) {
    it(`relays base time and exactly the filtered points (enc=${encoding})`, async () => {
      const down = await connect(b, { nodeId: NODE_D, encoding });
      conns.push(down);
      const ds = await down.openDownstream({
        filters: [
          new iscp.DownstreamFilter({
            sourceNodeId: NODE_U,
            dataFilters: [new iscp.DataFilter({ name: "sensor/+", type: "#" })],
          }),
        ],
        qos: iscp.QOS.RELIABLE,
      });
      const got = collect(ds);
      const up = await connect(b, { nodeId: NODE_U, encoding });
      conns.push(up);
      const us = await up.openUpstream({ sessionId: "s1", qos: iscp.QOS.RELIABLE });
      const baseTime = BigInt(Date.now()) * 1_000_000n;
      await up.sendBaseTime(
        new iscp.BaseTime({ sessionId: "s1", name: "manual", priority: 1000, elapsedTime: 0n, baseTime }),
      );
      const temp = new iscp.DataId({ name: "sensor/temp", type: "float/text" });
      const other = new iscp.DataId({ name: "other", type: "string" });
      await us.writeDataPoints(temp, [point(1n, "t1"), point(2n, "t2")]);
      await us.writeDataPoints(other, [point(3n, "filtered out")]);
      await us.flush();
      await us.writeDataPoints(temp, [point(-4n, "t3")]); // second chunk uses the acked alias
      await us.flush();
      await waitFor(() => got.points.length >= 3, 30_000, "points");
      await us.close();
      await new Promise((r) => setTimeout(r, 200));
      expect(got.baseTimes).toEqual([baseTime]);
      expect(got.points).toEqual([
        { name: "sensor/temp", type: "float/text", elapsed: 1n, text: "t1", seq: 1 },
        { name: "sensor/temp", type: "float/text", elapsed: 2n, text: "t2", seq: 1 },
        { name: "sensor/temp", type: "float/text", elapsed: -4n, text: "t3", seq: 2 },
      ]);
      await ds.close();
    });
  }

  it("sends upstream and data-ID aliases once iscp-ts has declared them", async () => {
    const down = await connect(b, { nodeId: NODE_D, encoding: "json" });
    conns.push(down);
    const ds = await down.openDownstream({ filters: [iscp.DownstreamFilter.allFor(NODE_U)] });
    const got = collect(ds);
    const up = await connect(b, { nodeId: NODE_U });
    conns.push(up);
    const us = await up.openUpstream({ sessionId: "s1", qos: iscp.QOS.RELIABLE });
    const id = new iscp.DataId({ name: "n", type: "t" });
    await us.writeDataPoints(id, [point(1n, "a")]);
    await us.flush();
    const state = () => [...b.broker.hub.downstreams.values()][0]!;
    await waitFor(
      () => state().upstreamAliases.size === 1 && state().dataIdAliases.size === 1,
      30_000,
      "declared aliases",
    );
    for (let i = 2; i <= 5; i++) {
      await us.writeDataPoints(id, [point(BigInt(i), String.fromCharCode(96 + i))]);
      await us.flush();
    }
    await waitFor(() => got.points.length === 5, 30_000, "points via aliases");
    expect(got.points.map((p) => `${p.name}:${p.text}`)).toEqual(["n:a", "n:b", "n:c", "n:d", "n:e"]);
  });

  it("round-trips an E2E call and its reply", async () => {
    const caller = await connect(b, { nodeId: NODE_U });
    const callee = await connect(b, { nodeId: NODE_D });
    conns.push(caller, callee);
    callee.addEventListener(iscp.Conn.EVENT.CALL, (call: iscp.DownstreamCall) => {
      void callee.sendReplyCall(
        new iscp.UpstreamReplyCall({
          requestCallId: call.callId,
          destinationNodeId: call.sourceNodeId,
          name: "pong",
          type: "text",
          payload: enc.encode(`re:${dec.decode(call.payload)}`),
        }),
      );
    });
    const reply = await caller.sendCallAndWaitReplyCall(
      new iscp.UpstreamCall({ destinationNodeId: NODE_D, name: "ping", type: "text", payload: enc.encode("hello") }),
    );
    expect(reply.sourceNodeId).toBe(NODE_D);
    expect(reply.name).toBe("pong");
    expect(dec.decode(reply.payload)).toBe("re:hello");
    // No such node: the call is acked with a failure code and the client rejects.
    await expect(
      caller.sendCall(
        new iscp.UpstreamCall({ destinationNodeId: "nobody", name: "x", type: "y", payload: new Uint8Array(0) }),
      ),
    ).rejects.toMatchObject({ resultCode: 77 });
  });

  it("refuses a bad token with AUTH_FAILED", async () => {
    await expect(connect(b, { nodeId: NODE_U, token: "wrong" })).rejects.toMatchObject({ resultCode: 66 });
  });

  it("resumes upstream and downstream after their sockets are dropped", async () => {
    const down = await connect(b, { nodeId: NODE_D, pingInterval: 1, pingTimeout: 1 });
    conns.push(down);
    const ds = await down.openDownstream({ filters: [iscp.DownstreamFilter.allFor(NODE_U)], qos: iscp.QOS.RELIABLE });
    const got = collect(ds);
    const up = await connect(b, { nodeId: NODE_U, pingInterval: 1, pingTimeout: 1 });
    conns.push(up);
    let reconnected = 0;
    up.addEventListener(iscp.Conn.EVENT.RECONNECTED, () => reconnected++);
    down.addEventListener(iscp.Conn.EVENT.RECONNECTED, () => reconnected++);
    const us = await up.openUpstream({ sessionId: "s1", qos: iscp.QOS.RELIABLE, expiryInterval: 1 });
    const id = new iscp.DataId({ name: "n", type: "t" });
    await us.writeDataPoints(id, [point(1n, "before")]);
    await us.flush();
    await waitFor(() => got.points.length === 1, 30_000, "first point");
    // RELIABLE downstreams re-send unacked chunks after a resume; wait for iscp-ts' 1 s ack first.
    await waitFor(
      () => Object.values(b.broker.stats().downstreams).every((d) => d.unackedChunks === 0),
      30_000,
      "downstream ack",
    );
    const streamsBefore = Object.keys(b.broker.stats().downstreams);

    for (const c of b.broker.connections()) c.transport.terminate();
    // iscp-ts only notices through its ping timeout; then it reconnects and resumes.
    await waitFor(
      () => reconnected >= 2 && b.broker.connections().filter((c) => c.isOpen).length === 2,
      30_000,
      "reconnects",
    );
    await waitFor(
      () => b.broker.connections().every((c) => c.upstreams.size + c.downstreams.size === 1),
      30_000,
      "resumes",
    );
    await us.writeDataPoints(id, [point(2n, "after")]);
    await us.flush();
    await waitFor(() => got.points.length === 2, 30_000, "point after resume");
    expect(got.points.map((p) => p.text)).toEqual(["before", "after"]);
    expect(Object.keys(b.broker.stats().downstreams)).toEqual(streamsBefore);
    expect(b.broker.stats().upstreams).toBe(1);
  }, 120_000);
});
