// kill -9 of the peer holding an upstream mid-stream: the agent's iSCP client reconnects through the
// balancer to another peer and resumes the same stream there; the chunks the dead peer stored but never
// acknowledged are sent again and acknowledged without a second copy; every point is stored exactly once.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IscpClient } from "../../../runtime/iscp/conn.js";
import type { ClientUpstream, UpstreamOptions } from "../../../runtime/iscp/upstream.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { QoS } from "../../../proto/wire/message.js";
import { postgresInstalled } from "../../support/postgres.js";
import { natsInstalled } from "../../support/nats.js";
import { caller, type Call } from "../accounts/helpers.js";
import { adminToken } from "../oauth/helpers.js";
import { edgeToken, makeEdge, type TestEdge } from "../org/helpers.js";
import { eventually, startCluster, type Cluster } from "./helpers.js";

const PROJECT = "00000000-0000-0000-0000-000000000000";
const ready = postgresInstalled() && natsInstalled();
const N = 200;

describe.runIf(ready)("an upstream whose peer is killed resumes on another peer", () => {
  let cluster: Cluster;
  let admin: string;
  /** REST through a peer that stays up. */
  let read: Call;
  let edge: TestEdge;
  let client: IscpClient | undefined;

  beforeAll(async () => {
    cluster = await startCluster(3);
    const p0 = cluster.peers[0]!.peer;
    admin = await adminToken(p0);
    edge = await makeEdge(caller(p0, `Bearer ${admin}`, "Authorization"), "takeover-edge");
    read = caller(cluster.peers[1]!.peer, `Bearer ${admin}`, "Authorization");
  }, 180_000);
  afterAll(async () => {
    await client?.close().catch(() => undefined);
    for (const p of cluster?.peers ?? []) if (p.log()) console.log(`peer ${p.port}:\n${p.log()}`);
    await cluster?.stop();
  }, 60_000);

  /** The payloads stored for the measurement, read over REST through the balancer. */
  const storedPayloads = async (meas: string): Promise<string[]> => {
    const res = await read(`/v1/projects/${PROJECT}/data?name=${meas}&time_format=ns`);
    if (res.status !== 200 || res.body === undefined) return [];
    const text = typeof res.body === "string" ? res.body : JSON.stringify(res.body) + "\n";
    const lines = text.trim().split("\n").filter(Boolean).map((l: string) => JSON.parse(l) as { data_id: string; data: { d?: string } });
    // A payload of a type the data endpoint does not decode comes as base64.
    return lines.filter((l) => l.data_id === "count").map((l) => Buffer.from(String(l.data.d), "base64").toString());
  };

  it("kill -9 mid-stream: the client resumes through the balancer on another peer, every point is stored once", async () => {
    const [a, b, c] = cluster.peers as [Cluster["peers"][0], Cluster["peers"][0], Cluster["peers"][0]];
    cluster.balancer.only([a.port]);
    const token = (await edgeToken(a.peer, edge)).body.access_token as string;
    client = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${cluster.balancer.url.replace("http", "ws")}/api/iscp/connect` }),
      token,
      nodeId: edge.uuid,
      projectUuid: PROJECT,
      reconnectBaseMs: 50,
      reconnectMaxMs: 500,
    });
    // Set once the client has resumed (or given up) its streams on the new connection.
    let reconnected = false;
    client.onStateChange((state, why) => {
      if (state === "open" && why === "reconnected") reconnected = true;
    });
    const meas = randomUUID();
    // Acks batched over 5 s: when A dies, what it stored is not acknowledged yet.
    const opts: UpstreamOptions = { sessionId: meas, qos: QoS.RELIABLE, persist: true, ackIntervalMs: 5_000, expiryIntervalSec: 60, closeTimeoutMs: 30_000 };
    const acked = new Set<number>();
    const lost: Error[] = [];
    const payloadOf = new Map<number, string>();
    const watch = (up: ClientUpstream) => {
      up.onAck((rs) => {
        for (const r of rs) if (r.resultCode === 0) acked.add(r.sequenceNumber);
      });
      up.onError((e) => lost.push(e));
    };
    let up = await client.openUpstream(opts);
    watch(up);
    const writePoint = (u: ClientUpstream, i: number) => {
      u.write({ name: "count", type: "string" }, [{ elapsedTime: BigInt(i) * 1_000_000n, payload: Buffer.from(`p${i}`) }]);
      payloadOf.set(u.flush(), `p${i}`);
    };
    for (let i = 0; i < N / 2; i++) writePoint(up, i);
    // Stored by A (read through B), and not acknowledged yet.
    await eventually(async () => (await storedPayloads(meas)).length >= N / 2, 20_000, "the first half stored");
    const ackedBeforeKill = acked.size;

    cluster.balancer.only([b.port, c.port]);
    a.child.kill("SIGKILL");
    await a.exit;
    await eventually(async () => reconnected, 30_000, "the client reconnected through the balancer");

    if (lost.length > 0) {
      // What a client does when its stream cannot be resumed: a new stream, with what was not acknowledged.
      const unacked = [...payloadOf].filter(([seq]) => !acked.has(seq)).map(([, p]) => Number(p.slice(1)));
      up = await client.openUpstream(opts);
      watch(up);
      for (const i of unacked) writePoint(up, i);
    }
    for (let i = N / 2; i < N; i++) writePoint(up, i);
    expect(await up.waitAcked(30_000)).toBe(true);
    await up.close({ closeSession: true });

    expect(ackedBeforeKill).toBeLessThan(N / 2);
    const payloads = await storedPayloads(meas);
    const counts = new Map<string, number>();
    for (const p of payloads) counts.set(p, (counts.get(p) ?? 0) + 1);
    const expected = Array.from({ length: N }, (_, i) => `p${i}`);
    expect(expected.filter((p) => !counts.has(p)), "missing points").toEqual([]);
    expect([...counts].filter(([, n]) => n > 1).map(([p]) => p), "points stored twice").toEqual([]);
    expect(payloads).toHaveLength(N);
    expect(lost.map((e) => e.message), "the stream was resumed").toEqual([]);
    // One stream from start to end: one sequence, complete.
    const seqs = await read(`/v1/projects/${PROJECT}/measurements/${meas}/sequences`);
    expect(seqs.status).toBe(200);
    expect(seqs.body.items ?? seqs.body).toHaveLength(1);
  }, 180_000);
});
