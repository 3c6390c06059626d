// iSCP across cloud peers: an edge upstreaming to peer A is received by downstreams on peers B and C
// (and A itself) with the same filters, order and sequence numbers, through NATS; and stored once.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { IscpRequestError } from "../../../runtime/iscp/request-error.js";
import type { ReceivedChunk } from "../../../runtime/iscp/downstream.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { QoS } from "../../../proto/wire/message.js";
import { postgresInstalled } from "../../support/postgres.js";
import { natsInstalled } from "../../support/nats.js";
import { caller, type Call } from "../accounts/helpers.js";
import { adminToken } from "../oauth/helpers.js";
import { edgeToken, makeEdge, type TestEdge } from "../org/helpers.js";
import { eventually, startCluster, type Cluster } from "./helpers.js";
import pg from "pg";
import { lockKey } from "../../../cloud/database/pg-db.js";
import { measurementLock } from "../../../cloud/measurements/service/model.js";

const PROJECT = "00000000-0000-0000-0000-000000000000";
const ready = postgresInstalled() && natsInstalled();

type Point = { seq: number; name: string; text: string; elapsed: bigint };
const flatten = (chunks: ReceivedChunk[]): Point[] =>
  chunks.flatMap((c) =>
    c.groups.flatMap((g) =>
      g.dataPoints.map((p) => ({
        seq: c.sequenceNumber,
        name: g.dataId.name,
        text: Buffer.from(p.payload).toString(),
        elapsed: p.elapsedTime,
      })),
    ),
  );

describe.runIf(ready)("iSCP across three cloud peers on NATS", () => {
  let cluster: Cluster;
  let admin: string;
  let call: Call;
  let edge: TestEdge;
  const clients: IscpClient[] = [];
  const connect = async (url: string, token: string, nodeId: string) => {
    const c = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${url.replace("http", "ws")}/api/iscp/connect` }),
      token,
      nodeId,
      projectUuid: PROJECT,
      reconnect: false,
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    cluster = await startCluster(3);
    const p0 = cluster.peers[0]!.peer;
    admin = await adminToken(p0);
    call = caller(p0, `Bearer ${admin}`, "Authorization");
    edge = await makeEdge(call, "cluster-edge");
  }, 180_000);
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const p of cluster?.peers ?? []) if (p.log()) console.log(`peer ${p.port}:\n${p.log()}`);
    await cluster?.stop();
  }, 120_000);

  it("takes a ticket issued by one peer on another, once", async () => {
    const issued = await call("/iscp/tickets", { method: "POST" });
    expect(issued.status).toBe(201);
    const c = await connect(cluster.peers[1]!.url, issued.body.ticket, randomUUID());
    expect(c.state).toBe("open");
    const again = await connect(cluster.peers[2]!.url, issued.body.ticket, randomUUID()).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(IscpRequestError);
  });

  it("relays an E2E call to a node connected to another peer, and says so when no peer has it", async () => {
    const [a, b] = cluster.peers.map((p) => p.url) as [string, string];
    const tok = (await edgeToken(cluster.peers[0]!.peer, edge)).body.access_token as string;
    const target = await connect(b, tok, edge.uuid);
    const got: Array<{ name: string; text: string; from: string }> = [];
    target.onCall((c) => got.push({ name: c.name, text: Buffer.from(c.payload).toString(), from: c.sourceNodeId }));
    const caller = await connect(a, admin, randomUUID());
    await caller.call({ destinationNodeId: edge.uuid, name: "reboot", type: "string", payload: Buffer.from("now") });
    await eventually(async () => got.length === 1, 30_000, "the call on peer B");
    expect(got[0]).toMatchObject({ name: "reboot", text: "now" });
    await expect(
      caller.call({ destinationNodeId: randomUUID(), name: "x", type: "string", payload: Buffer.from("") }),
    ).rejects.toThrow();
  });

  it("relays an upstream on A to filtered downstreams on A, B and C alike, and stores it once", async () => {
    const [a, b, c] = cluster.peers.map((p) => p.url) as [string, string, string];
    const filters = [{ sourceNodeId: edge.uuid, dataFilters: [{ name: "sensor/+", type: "#" }] }];
    const received = new Map<string, ReceivedChunk[]>();
    const baseTimes = new Map<string, bigint[]>();
    for (const [name, url, qos] of [
      ["A", a, QoS.RELIABLE],
      ["B", b, QoS.RELIABLE],
      ["C", c, QoS.UNRELIABLE],
    ] as const) {
      const conn = await connect(url, admin, randomUUID());
      const ds = await conn.openDownstream({ filters, qos });
      received.set(name, []);
      baseTimes.set(name, []);
      ds.onChunk((chunk) => received.get(name)!.push(chunk));
      ds.onMetadata((m) => m.baseTime && baseTimes.get(name)!.push(BigInt(String(m.baseTime.baseTime))));
    }
    // The other peers' subscriptions reach NATS a moment after their open response.
    await new Promise((r) => setTimeout(r, 300));
    const tok = (await edgeToken(cluster.peers[0]!.peer, edge)).body.access_token as string;
    const up = await connect(a, tok, edge.uuid);
    const session = randomUUID();
    const baseNs = BigInt(Date.now()) * 1_000_000n;
    await up.sendBaseTime(
      { sessionId: session, name: "edge_rtc", priority: 20, elapsedTime: 0n, baseTime: baseNs },
      true,
    );
    const us = await up.openUpstream({ sessionId: session, persist: true });
    const sent: Point[] = [];
    for (let i = 1; i <= 20; i++) {
      us.write({ name: "sensor/a", type: "string" }, [{ elapsedTime: BigInt(i), payload: Buffer.from(`a${i}`) }]);
      us.write({ name: "other", type: "string" }, [{ elapsedTime: BigInt(i), payload: Buffer.from(`filtered ${i}`) }]);
      if (i % 2 === 0)
        us.write({ name: "sensor/b", type: "string" }, [{ elapsedTime: BigInt(i), payload: Buffer.from(`b${i}`) }]);
      us.flush();
      sent.push({ seq: i, name: "sensor/a", text: `a${i}`, elapsed: BigInt(i) });
      if (i % 2 === 0) sent.push({ seq: i, name: "sensor/b", text: `b${i}`, elapsed: BigInt(i) });
    }
    expect(await us.waitAcked(15_000)).toBe(true);
    await eventually(
      async () => [...received.values()].every((r) => flatten(r).length >= sent.length),
      30_000,
      "every downstream has every point",
    );
    for (const name of ["A", "B", "C"]) {
      expect(flatten(received.get(name)!), name).toEqual(sent);
      expect(
        received.get(name)!.every((ch) => ch.upstream.sourceNodeId === edge.uuid && ch.upstream.sessionId === session),
        name,
      ).toBe(true);
      expect(baseTimes.get(name), name).toEqual([baseNs]);
    }
    await us.close({ closeSession: true });
    // Stored once, by the peer that received the upstream, and readable through any peer.
    const read = caller(cluster.peers[2]!.peer, `Bearer ${admin}`, "Authorization");
    let lines: Array<{ data_id: string }> = [];
    await eventually(
      async () => {
        const res = await read(`/v1/projects/${PROJECT}/data?name=${session}&time_format=ns`);
        const text = typeof res.body === "string" ? res.body : JSON.stringify(res.body) + "\n";
        lines =
          res.status === 200
            ? text
                .trim()
                .split("\n")
                .filter(Boolean)
                .map((l: string) => JSON.parse(l))
            : [];
        return lines.length >= 50;
      },
      30_000,
      "stored points",
    );
    expect(lines.length).toBe(50);
  });

  it("relays an upstream's chunks to a downstream on another peer while their commit waits, and stores each once", async () => {
    // A peer whose store budget admits a few chunks: the rest are held, as under a backlog of many edges.
    const d = await cluster.addPeer({
      CLOUD_ISCP_LIMITS: "maxPendingStoreBytes=8192,minPendingStoreBytesPerConn=1024",
    });
    const edge = await makeEdge(call, "ahead-edge"); // its own: no other test's downstream wants it
    const session = randomUUID();
    // The measurement's lock, held here: no commit of its chunks can finish until it is let go.
    const blocker = new pg.Client({ connectionString: cluster.database });
    await blocker.connect();
    await blocker.query("SELECT pg_advisory_lock($1)", [lockKey(measurementLock(session).locks[0]!)]);
    const seen: number[] = [];
    try {
      const viewer = await connect(cluster.peers[1]!.url, admin, randomUUID());
      const ds = await viewer.openDownstream({
        filters: [{ sourceNodeId: edge.uuid, dataFilters: [{ name: "#", type: "#" }] }],
      });
      ds.onChunk((chunk) => seen.push(chunk.sequenceNumber));
      await new Promise((r) => setTimeout(r, 300)); // peer B's subscription reaches NATS
      const tok = (await edgeToken(cluster.peers[0]!.peer, edge)).body.access_token as string;
      const up = await connect(d.url, tok, edge.uuid);
      const us = await up.openUpstream({ sessionId: session, persist: true });
      for (let i = 1; i <= 100; i++) {
        us.write({ name: "n", type: "bytes" }, [{ elapsedTime: BigInt(i), payload: Buffer.alloc(1024, i) }]);
        us.flush();
      }
      await eventually(async () => seen.length >= 100, 10_000, "every chunk on peer B before any commit");
      expect(us.unackedCount).toBe(100);
      await blocker.end();
      expect(await us.waitAcked(15_000)).toBe(true);
    } finally {
      await blocker.end().catch(() => undefined);
    }
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const read = caller(cluster.peers[2]!.peer, `Bearer ${admin}`, "Authorization");
    const sequences = await read(`/v1/projects/${PROJECT}/measurements/${session}/sequences`);
    expect(sequences.body.items).toMatchObject([{ received_chunks_count: 100, received_data_points: 100 }]);
  });

  it("lists an edge connected to one peer, with its data rate, through every peer, and forgets it once it leaves", async () => {
    const edge = await makeEdge(call, "rate-edge"); // its own: the other tests' connections stay open
    const tok = (await edgeToken(cluster.peers[0]!.peer, edge)).body.access_token as string;
    const conn = await connect(cluster.peers[0]!.url, tok, edge.uuid);
    const up = await conn.openUpstream({ sessionId: randomUUID(), persist: false });
    for (let i = 0; i < 10; i++)
      up.write({ name: "rate", type: "string" }, [{ elapsedTime: BigInt(i), payload: Buffer.from("12345678") }]);
    up.flush();
    expect(await up.waitAcked(10_000)).toBe(true);
    type Item = {
      edge_uuid: string;
      upstreams: number;
      data_rate: { points_per_second: number; bytes_per_second: number };
    };
    const listed = (i: number) =>
      caller(
        cluster.peers[i]!.peer,
        `Bearer ${admin}`,
        "Authorization",
      )(`/v1/projects/${PROJECT}/edge_connections`).then((r) =>
        (r.body.items as Item[]).filter((x) => x.edge_uuid === edge.uuid),
      );
    for (const i of [1, 2]) {
      await eventually(
        async () => (await listed(i)).some((x) => x.upstreams === 1 && x.data_rate.points_per_second > 0),
        30_000,
        `the edge listed by peer ${i}`,
      );
      const [item] = await listed(i);
      // Both figures are rounded to 0.1 on their own, so 8 bytes a point holds within 8 × 0.05 + 0.05.
      const { points_per_second, bytes_per_second } = item!.data_rate;
      expect(Math.abs(bytes_per_second - points_per_second * 8)).toBeLessThanOrEqual(0.45 + 1e-9);
    }
    await conn.close();
    await eventually(
      async () => (await listed(1)).length === 0 && (await listed(2)).length === 0,
      30_000,
      "the edge gone from every peer's list",
    );
  });
});
