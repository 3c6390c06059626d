// DownstreamMetadata lifecycle notices: a downstream on a node hears about that node's upstreams
// opening, resuming, closing normally (with the client's totals) and expiring (abnormal close),
// each with the downstream's alias, the source node and an odd server request id.
import { afterEach, describe, expect, it } from "vitest";
import { bytesToUuid } from "../../../proto/wire/uuid.js";
import { iscp2, QoS } from "../../../proto/wire/message.js";
import { IscpHub, MAX_BASE_TIME_NODES } from "../../../cloud/iscp/broker/hub.js";
import { DEFAULT_LIMITS, silentLogger } from "../../../cloud/iscp/broker/options.js";
import { startTestBroker, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { ALL, connected, NODE_U, type Raw } from "../../support/iscp-raw-peer.js";

const notices = (r: Raw) =>
  r.msgs.filter((m) => m.downstreamMetadata).map((m) => m.downstreamMetadata as iscp2.DownstreamMetadata);
const kindOf = (m: iscp2.DownstreamMetadata) => m.metadata!;

describe("downstream lifecycle notices", () => {
  let b: TestBroker;
  afterEach(async () => b?.close());

  it("reports upstream open, resume, normal close and expiry to the node's downstreams", async () => {
    b = await startTestBroker({ limits: { expiryGraceFloorSec: 1 } });
    const d = await connected(b, { nodeId: "reader" });
    d.send({
      downstreamOpenRequest: {
        requestId: 2,
        desiredStreamIdAlias: 7,
        downstreamFilters: [{ sourceNodeId: NODE_U, dataFilters: ALL }],
      },
    });
    await d.next("downstreamOpenResponse");

    const u1 = await connected(b);
    u1.send({ upstreamOpenRequest: { requestId: 2, sessionId: "s1", qos: QoS.RELIABLE, expiryInterval: 1 } });
    const id1 = (await u1.next("upstreamOpenResponse")).upstreamOpenResponse!.assignedStreamId!;
    await waitFor(() => notices(d).length === 1, 30_000, "open notice");
    u1.ws.terminate();
    const u2 = await connected(b);
    await waitFor(() => b.broker.connections().length === 2, 30_000, "old socket gone");
    u2.send({ upstreamResumeRequest: { requestId: 2, streamId: id1 } });
    await u2.next("upstreamResumeResponse");
    u2.send({ upstreamCloseRequest: { requestId: 4, streamId: id1, totalDataPoints: 12, finalSequenceNumber: 3 } });
    await u2.next("upstreamCloseResponse");
    // A second upstream whose connection goes away and never comes back expires.
    u2.send({ upstreamOpenRequest: { requestId: 6, sessionId: "s2", qos: QoS.UNRELIABLE, expiryInterval: 1 } });
    const id2 = (await u2.next("upstreamOpenResponse")).upstreamOpenResponse!.assignedStreamId!;
    u2.ws.terminate();
    await waitFor(() => notices(d).length === 5, 30_000, "five notices");

    const got = notices(d);
    expect(got.map(kindOf)).toEqual([
      "upstreamOpen",
      "upstreamResume",
      "upstreamNormalClose",
      "upstreamOpen",
      "upstreamAbnormalClose",
    ]);
    for (const m of got) expect([m.streamIdAlias, m.sourceNodeId, m.requestId! % 2]).toEqual([7, NODE_U, 1]);
    expect(new Set(got.map((m) => m.requestId)).size).toBe(5);
    const [open1, resume1, close1, open2, expired2] = got;
    expect([
      bytesToUuid(open1!.upstreamOpen!.streamId),
      open1!.upstreamOpen!.sessionId,
      open1!.upstreamOpen!.qos,
    ]).toEqual([bytesToUuid(id1), "s1", QoS.RELIABLE]);
    expect([bytesToUuid(resume1!.upstreamResume!.streamId), resume1!.upstreamResume!.sessionId]).toEqual([
      bytesToUuid(id1),
      "s1",
    ]);
    const nc = close1!.upstreamNormalClose!;
    expect([bytesToUuid(nc.streamId), nc.sessionId, String(nc.totalDataPoints), nc.finalSequenceNumber]).toEqual([
      bytesToUuid(id1),
      "s1",
      "12",
      3,
    ]);
    expect([bytesToUuid(open2!.upstreamOpen!.streamId), open2!.upstreamOpen!.qos ?? 0]).toEqual([
      bytesToUuid(id2),
      QoS.UNRELIABLE,
    ]);
    expect([
      bytesToUuid(expired2!.upstreamAbnormalClose!.streamId),
      expired2!.upstreamAbnormalClose!.sessionId,
    ]).toEqual([bytesToUuid(id2), "s2"]);
    d.ws.close();
  });
});

describe("base times remembered for new downstreams", () => {
  it("keeps the latest base times of a bounded number of nodes", () => {
    const hub = new IscpHub(DEFAULT_LIMITS, {}, silentLogger);
    const P = "00000000-0000-0000-0000-000000000000";
    const nodes = MAX_BASE_TIME_NODES + 100; // e.g. users connecting with ever new node ids
    for (let i = 0; i < nodes; i++)
      hub.publishMetadata(P, `node-${i}`, { baseTime: { sessionId: "s", name: "manual", priority: 1 } });
    hub.publishMetadata(P, "node-0", { baseTime: { sessionId: "s", name: "manual", priority: 2 } }); // refreshed: kept
    expect(hub.stats().baseTimeNodes).toBe(MAX_BASE_TIME_NODES);
    const replayed = (node: string) => {
      const got: unknown[] = [];
      hub.replayBaseTimes({
        sourceNodeIds: new Set([node]),
        projectUuid: P,
        sendMetadata: (m: unknown) => got.push(m),
      } as never);
      return got;
    };
    expect(replayed("node-0")).toHaveLength(1);
    expect(replayed("node-1")).toHaveLength(0); // the oldest went first
    expect(replayed(`node-${nodes - 1}`)).toHaveLength(1);
    hub.close();
  });
});
