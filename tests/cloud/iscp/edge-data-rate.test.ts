// GET /v1/projects/{p}/edge_connections reports each connected edge's data rate (points and payload
// bytes per second over the last seconds), as the console's edges page shows it.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminToken, caller, type Call } from "../accounts/helpers.js";
import { edgeToken, makeEdge, type TestEdge } from "../org/helpers.js";

const PROJECT = "00000000-0000-0000-0000-000000000000";

describe("edge connections' data rate", () => {
  let peer: TestPeer;
  let admin: Call;
  let edge: TestEdge;
  let client: IscpClient | undefined;

  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
    edge = await makeEdge(admin, "rate-edge");
  });
  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await peer.stop();
  });

  const connections = async () => {
    const r = await admin(`/v1/projects/${PROJECT}/edge_connections`);
    expect(r.status).toBe(200);
    return r.body.items as { edge_uuid: string; data_rate: { points_per_second: number; bytes_per_second: number } }[];
  };

  it("is zero before data and counts the points and payload bytes an edge sends", async () => {
    const token = (await edgeToken(peer, edge)).body.access_token as string;
    client = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${peer.url.replace("http", "ws")}/api/iscp/connect` }),
      token,
      nodeId: edge.uuid,
      projectUuid: PROJECT,
      reconnect: false,
    });
    const up = await client.openUpstream({ sessionId: randomUUID() });
    expect((await connections()).map((c) => [c.edge_uuid, c.data_rate])).toEqual([
      [edge.uuid, { points_per_second: 0, bytes_per_second: 0 }],
    ]);
    // 400 points of 16 bytes, in 4 chunks a quarter of a second apart.
    for (let chunk = 0; chunk < 4; chunk++) {
      up.write(
        { name: "v/x", type: "bytes" },
        Array.from({ length: 100 }, (_, i) => ({
          elapsedTime: BigInt(chunk * 100 + i) * 1_000_000n,
          payload: new Uint8Array(16),
        })),
      );
      up.flush();
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(await up.waitAcked(10_000)).toBe(true);
    const [conn] = await connections();
    // 400 points over the connection's age (at least 1 s, at most the 5 s window).
    expect(conn!.data_rate.points_per_second).toBeGreaterThanOrEqual(400 / 5);
    expect(conn!.data_rate.points_per_second).toBeLessThanOrEqual(400);
    expect(conn!.data_rate.bytes_per_second / conn!.data_rate.points_per_second).toBeCloseTo(16, 1);
  }, 120_000);

  it("is in the OpenAPI document", async () => {
    const doc = (await admin("/openapi.json")).body;
    const text = JSON.stringify(doc);
    expect(text).toContain("points_per_second");
    expect(text).toContain("bytes_per_second");
  });
});
