// Measurement actions that data brings about are told too: an edge's persisted upstream makes a measurement
// (created) and its closed session ends and completes it; chunks uploaded over REST complete an ended one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { edgeToken, json, makeEdge } from "../org/helpers.js";
import { adminCall, chunksMessage, createMeasurement, uploadProto, uuid, type Call } from "../measurements/helpers.js";
import { holdingTurn, receiver } from "./helpers.js";

describe("webhooks: actions brought about by data", () => {
  let peer: TestPeer;
  let admin: Call;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let client: IscpClient | undefined;
  let project: string;
  let P: string;
  const told = (m: string) =>
    rx.got
      .map((r) => JSON.parse(r.body))
      .filter((b) => b.measurement_uuid === m)
      .map((b) => b.action)
      .sort();
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = await adminCall(peer);
    rx = await receiver();
    const group = (await json(admin("/auth/groups", { method: "POST", json: { name: "DG" } }), 201)).uuid;
    project = (await json(admin(`/auth/groups/${group}/projects`, { method: "POST", json: { name: "DP" } }), 201)).uuid;
    P = `/v1/projects/${project}`;
    const hook = await admin(`/projects/${project}/hooks`, {
      method: "POST",
      json: { url: rx.url("/data"), measurements_events: true },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  });
  afterAll(async () => {
    await client?.close();
    await peer?.stop();
    await rx?.close();
  });

  it("tells of a measurement an edge's upstream makes, and ends and completes by closing its session", async () => {
    const edge = await makeEdge(admin, "hooks-edge");
    await json(admin(`/auth/projects/${project}/edges`, { method: "POST", json: { edge_name: edge.name } }), 200);
    client = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${peer.url.replace("http", "ws")}/api/iscp/connect` }),
      token: (await edgeToken(peer, edge)).body.access_token,
      nodeId: edge.uuid,
      projectUuid: project,
      reconnect: false,
    });
    const session = uuid();
    const up = await client.openUpstream({ sessionId: session, persist: true });
    up.write({ name: "a", type: "bytes" }, [{ elapsedTime: 0n, payload: Buffer.from("x") }]);
    up.flush();
    expect(await up.waitAcked(30_000)).toBe(true);
    await expect.poll(() => told(session)).toEqual(["created"]);
    await up.close({ closeSession: true });
    await expect.poll(() => told(session)).toEqual(["completed", "created", "ended"]);
  });

  it("tells of an ended measurement completed by the chunks it still expected", async () => {
    const m = (await createMeasurement(admin, {}, `${P}/measurements`)).uuid as string;
    const seq = uuid();
    expect(
      (await admin(`${P}/measurements/${m}/sequences/${seq}`, { method: "PUT", json: { expected_data_points: 1 } }))
        .status,
    ).toBe(200);
    expect((await admin(`${P}/measurements/${m}/end`, { method: "PUT" })).status).toBe(200);
    await expect.poll(() => told(m)).toEqual(["created", "ended"]);
    const chunk = chunksMessage(m, seq, [[{ name: "x", type: "float64", elapsed: 1n, payload: new Uint8Array(8) }]]);
    expect((await uploadProto(admin, chunk, `${P}/measurements/sequences/chunks`)).status).toBe(200);
    await expect.poll(() => told(m)).toEqual(["completed", "created", "ended"]);
  });

  it("tells the completion an upstream's chunks bring about although the measurement is deleted before its turn", async () => {
    const edge = await makeEdge(admin, "hooks-edge-2");
    await json(admin(`/auth/projects/${project}/edges`, { method: "POST", json: { edge_name: edge.name } }), 200);
    const c = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${peer.url.replace("http", "ws")}/api/iscp/connect` }),
      token: (await edgeToken(peer, edge)).body.access_token,
      nodeId: edge.uuid,
      projectUuid: project,
      reconnect: false,
    });
    try {
      const m = uuid();
      const up = await c.openUpstream({ sessionId: m, persist: true });
      const send = async (t: bigint) => {
        up.write({ name: "a", type: "bytes" }, [{ elapsedTime: t, payload: Buffer.from("x") }]);
        up.flush();
        expect(await up.waitAcked(30_000)).toBe(true);
      };
      await send(0n);
      const put = { method: "PUT", json: { expected_data_points: 2 } };
      expect((await admin(`${P}/measurements/${m}/sequences/${up.streamId}`, put)).status).toBe(200);
      expect((await admin(`${P}/measurements/${m}/end`, { method: "PUT" })).status).toBe(200);
      await expect.poll(() => told(m)).toEqual(["created", "ended"]);
      await holdingTurn(peer, m, async () => {
        await send(1n); // the second point it expects: completed
        expect((await admin(`${P}/measurements/${m}`, { method: "DELETE" })).status).toBe(204);
      });
      await expect.poll(() => told(m)).toEqual(["completed", "created", "deleted", "ended"]);
    } finally {
      await c.close();
    }
  });

  it("tells the completion chunks bring about although the measurement is deleted before its turn", async () => {
    const m = (await createMeasurement(admin, {}, `${P}/measurements`)).uuid as string;
    const seq = uuid();
    const put = { method: "PUT", json: { expected_data_points: 1 } };
    expect((await admin(`${P}/measurements/${m}/sequences/${seq}`, put)).status).toBe(200);
    expect((await admin(`${P}/measurements/${m}/end`, { method: "PUT" })).status).toBe(200);
    await expect.poll(() => told(m)).toEqual(["created", "ended"]);
    // The completion's event waits for its turn until the measurement is deleted.
    await holdingTurn(peer, m, async () => {
      const chunk = chunksMessage(m, seq, [[{ name: "x", type: "float64", elapsed: 1n, payload: new Uint8Array(8) }]]);
      expect((await uploadProto(admin, chunk, `${P}/measurements/sequences/chunks`)).status).toBe(200);
      expect((await admin(`${P}/measurements/${m}`, { method: "DELETE" })).status).toBe(204);
    });
    await expect.poll(() => told(m)).toEqual(["completed", "created", "deleted", "ended"]);
  });
});
