// kill -9 of the peer holding an upstream mid-stream: the agent's iSCP client reconnects through the
// balancer to another peer and resumes the same stream there; the chunks the dead peer stored but never
// acknowledged are sent again and acknowledged without a second copy; every point is stored exactly once.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { QoS } from "../../../proto/wire/message.js";
import { natsInstalled } from "../../support/nats.js";
import { postgresInstalled } from "../../support/postgres.js";
import { caller, type Call } from "../accounts/helpers.js";
import { adminToken } from "../oauth/helpers.js";
import { edgeToken, makeEdge, type TestEdge } from "../org/helpers.js";
import { startCluster, type Cluster } from "./helpers.js";
import { missingAndTwice, PROJECT, streamThroughKill } from "./upstream-kill.js";

const N = 200;

describe.runIf(postgresInstalled() && natsInstalled())(
  "an upstream whose peer is killed resumes on another peer",
  () => {
    let cluster: Cluster;
    let edge: TestEdge;
    /** REST through a peer that stays up. */
    let read: Call;
    let admin: string;
    let watcher: IscpClient | undefined;

    beforeAll(async () => {
      cluster = await startCluster(3);
      const p0 = cluster.peers[0]!.peer;
      admin = await adminToken(p0);
      edge = await makeEdge(caller(p0, `Bearer ${admin}`, "Authorization"), "takeover-edge");
      read = caller(cluster.peers[1]!.peer, `Bearer ${admin}`, "Authorization");
    }, 180_000);
    afterAll(async () => {
      await watcher?.close().catch(() => undefined);
      for (const p of cluster?.peers ?? []) if (p.log()) console.log(`peer ${p.port}:\n${p.log()}`);
      await cluster?.stop();
    }, 120_000);

    it("kill -9 mid-stream: the client resumes through the balancer on another peer, every point is stored once", async () => {
      const [a, b, c] = cluster.peers as [Cluster["peers"][0], Cluster["peers"][0], Cluster["peers"][0]];
      cluster.balancer.only([a.port]);
      const token = (await edgeToken(a.peer, edge)).body.access_token as string;
      // A live viewer on C, which stays up: it hears the chunks A and then B relay, each once.
      watcher = await IscpClient.connect({
        transport: () => connectWebSocket({ url: `${c.url.replace("http", "ws")}/api/iscp/connect` }),
        token: admin,
        nodeId: randomUUID(),
        projectUuid: PROJECT,
        reconnect: false,
      });
      const ds = await watcher.openDownstream({
        filters: [{ sourceNodeId: edge.uuid, dataFilters: [{ name: "#", type: "#" }] }],
        qos: QoS.RELIABLE,
      });
      const relayed: number[] = [];
      ds.onChunk((chunk) => relayed.push(chunk.sequenceNumber));
      // C's subscription reaches NATS a moment after its open response.
      await new Promise((r) => setTimeout(r, 300));
      const run = await streamThroughKill({
        balancerUrl: cluster.balancer.url,
        token,
        nodeId: edge.uuid,
        read,
        points: N,
        kill: async () => {
          cluster.balancer.only([b.port, c.port]);
          a.child.kill("SIGKILL");
          await a.exit;
        },
      });
      // A had stored the first half but acknowledged none of it when it died.
      expect(run.ackedBeforeKill).toBeLessThan(N / 2);
      const { missing, twice } = missingAndTwice(run.payloads, N);
      expect(missing, "missing points").toEqual([]);
      expect(twice, "points stored twice").toEqual([]);
      expect(run.payloads).toHaveLength(N);
      expect(run.lost, "the stream was resumed").toEqual([]);
      expect(run.sequences, "one stream from start to end").toBe(1);
      // Chunks A stored and the client sent again to B are not relayed a second time.
      expect(new Set(relayed).size, "chunks relayed to C").toBeGreaterThanOrEqual(N / 2);
      expect(
        relayed.filter((n, i) => relayed.indexOf(n) !== i),
        "chunks relayed twice",
      ).toEqual([]);
    }, 180_000);
  },
);
