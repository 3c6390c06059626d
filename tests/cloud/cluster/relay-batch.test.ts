// Chunks relayed between two brokers over NATS go in batches (far fewer messages than chunks), and a downstream
// on the other broker still gets every chunk of the upstream once, in order, with its points.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachClusterRelay } from "../../../cloud/iscp/service/cluster-relay.js";
import { NatsBus } from "../../../cloud/cluster/service/nats-bus.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import type { ReceivedChunk } from "../../../runtime/iscp/downstream.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { QoS } from "../../../proto/wire/message.js";
import { startTestBroker, TOKEN, type TestBroker } from "../../support/iscp-broker.js";
import { natsInstalled, startNats, type NatsServer } from "../../support/nats.js";
import { eventually } from "./helpers.js";

const EDGE = "11111111-1111-4111-8111-111111111111";
const READER = "33333333-3333-4333-8333-333333333333";
const CHUNKS = 3000;

describe.runIf(natsInstalled())("iSCP relay between brokers over NATS", () => {
  let nats: NatsServer;
  const brokers: TestBroker[] = [];
  const buses: NatsBus[] = [];
  const stops: Array<() => void> = [];
  const clients: IscpClient[] = [];
  beforeAll(async () => {
    nats = await startNats();
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const stop of stops) stop();
    for (const b of buses) await b.close();
    for (const b of brokers) await b.close();
    nats?.stop();
  }, 120_000);

  const bus = async (id: string) => {
    const b = await NatsBus.open({ servers: nats.url, instanceId: id });
    buses.push(b);
    return b;
  };
  const peer = async (id: string) => {
    const b = await startTestBroker();
    brokers.push(b);
    stops.push(attachClusterRelay(b.broker.hub, await bus(id), (msg, err) => console.warn(msg, err)));
    return b;
  };
  const client = async (b: TestBroker, nodeId: string) => {
    const c = await IscpClient.connect({
      transport: () => connectWebSocket({ url: b.url }),
      token: TOKEN,
      nodeId,
      reconnect: false,
    });
    clients.push(c);
    return c;
  };

  it("batches one-point chunks into few NATS messages and delivers each once, in order", async () => {
    const a = await peer("a");
    const b = await peer("b");
    let messages = 0;
    (await bus("counter")).subscribe("cloud.iscp.*.*.chunk", () => messages++);
    const reader = await client(b, READER);
    const ds = await reader.openDownstream({
      filters: [{ sourceNodeId: EDGE, dataFilters: [{ name: "#", type: "#" }] }],
      qos: QoS.RELIABLE,
    });
    const got: ReceivedChunk[] = [];
    ds.onChunk((c) => got.push(c));
    await new Promise((r) => setTimeout(r, 300)); // B's subscription reaches NATS

    const edge = await client(a, EDGE);
    const us = await edge.openUpstream({ sessionId: "s", qos: QoS.RELIABLE });
    for (let i = 1; i <= CHUNKS; i++) {
      us.write({ name: i % 3 ? "v" : "w", type: "string" }, [
        { elapsedTime: BigInt(i), payload: Buffer.from(`p${i}`) },
      ]);
      us.flush();
    }
    expect(await us.waitAcked(20_000)).toBe(true);
    await eventually(async () => got.length >= CHUNKS, 30_000, "every chunk on B");
    await new Promise((r) => setTimeout(r, 200)); // nothing more comes
    expect(got.map((c) => c.sequenceNumber)).toEqual(Array.from({ length: CHUNKS }, (_, i) => i + 1));
    const points = got.flatMap((c) =>
      c.groups.flatMap((g) =>
        g.dataPoints.map((p) => `${g.dataId.name}:${p.elapsedTime}:${Buffer.from(p.payload).toString()}`),
      ),
    );
    expect(points).toEqual(Array.from({ length: CHUNKS }, (_, i) => `${(i + 1) % 3 ? "v" : "w"}:${i + 1}:p${i + 1}`));
    expect(got.every((c) => c.upstream.sourceNodeId === EDGE && c.upstream.sessionId === "s")).toBe(true);
    // One message per chunk before batching.
    expect(messages).toBeGreaterThan(0);
    expect(messages).toBeLessThan(CHUNKS / 4);
  }, 120_000);
});
