// One cloud peer (SQLite, or PostgreSQL in the postgres project) killed with -9 mid-stream and started
// again on the same data: the agent's iSCP client reconnects and resumes its upstream on the new process,
// which takes it back from the recorded stream state; every point is stored exactly once.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTcpBalancer, type TcpBalancer } from "../../support/tcp-balancer.js";
import { dropTestDatabase } from "../../support/test-database.js";
import { caller } from "../accounts/helpers.js";
import { remotePeer } from "../cluster/helpers.js";
import { missingAndTwice, streamThroughKill } from "../cluster/upstream-kill.js";
import { adminToken } from "../oauth/helpers.js";
import { edgeToken, makeEdge } from "../org/helpers.js";
import { spawnPeerAt } from "./peer-process.js";

const N = 200;

describe("an upstream resumed on its peer restarted after kill -9", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "restart-peer-"));
  let balancer: TcpBalancer | undefined;
  let peer: Awaited<ReturnType<typeof spawnPeerAt>> | undefined;
  afterAll(async () => {
    await balancer?.close();
    if (peer && peer.child.exitCode === null && peer.child.signalCode === null) peer.child.kill("SIGTERM");
    await peer?.exit;
    fs.rmSync(dataDir, { recursive: true, force: true });
    await dropTestDatabase(dataDir);
  }, 120_000);

  it("kill -9 mid-stream and a restart: the client resumes the same stream, every point is stored once", async () => {
    balancer = await startTcpBalancer([]);
    // Tokens name the balancer's URL, which outlives the process.
    const env = { CLOUD_PUBLIC_URL: balancer.url };
    peer = await spawnPeerAt(dataDir, env);
    balancer.setBackends([Number(new URL(peer.url).port)]);
    const front = remotePeer(balancer.url);
    const admin = await adminToken(front);
    const call = caller(front, `Bearer ${admin}`, "Authorization");
    const edge = await makeEdge(call, "restart-edge");
    const token = (await edgeToken(front, edge)).body.access_token as string;
    const run = await streamThroughKill({
      balancerUrl: balancer.url,
      token,
      nodeId: edge.uuid,
      read: call,
      points: N,
      kill: async () => {
        peer!.child.kill("SIGKILL");
        await peer!.exit;
        peer = await spawnPeerAt(dataDir, env);
        balancer!.setBackends([Number(new URL(peer.url).port)]);
      },
    });
    expect(run.ackedBeforeKill).toBeLessThan(N / 2);
    const { missing, twice } = missingAndTwice(run.payloads, N);
    expect(missing, "missing points").toEqual([]);
    expect(twice, "points stored twice").toEqual([]);
    expect(run.lost, "the stream was resumed").toEqual([]);
    expect(run.sequences, "one stream from start to end").toBe(1);
  }, 180_000);
});
