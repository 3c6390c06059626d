// The scale-out bench's cloud: N cloud-peer instances (children, bin/cloud-peer.mjs) on one PostgreSQL database
// and one nats-server, behind the TCP balancer, everything in temp directories; or one instance on SQLite for
// reference. The first instance migrates the database and makes the bench's token, project and viewer edge.
import fs from "node:fs";
import path from "node:path";
import { startCloudPeer, type CloudInfo, type CloudPeer } from "../../runtime/device-bench/cloud-peer.js";
import { startNats, type NatsServer } from "./nats.js";
import { startPostgres, type PgServer } from "./postgres.js";
import { startTcpBalancer, type TcpBalancer } from "./tcp-balancer.js";

export type Backend = "postgres" | "sqlite";

export interface BenchCluster {
  backend: Backend;
  /** The first instance's info, with the balancer's URL where there is one (what edges are given). */
  info: CloudInfo;
  instances: CloudPeer[];
  /** The PostgreSQL server's postmaster pid (its backends are its children), undefined on SQLite. */
  postgresPid?: number;
  stop(): Promise<void>;
}

export async function startBenchCluster(dir: string, backend: Backend, n: number): Promise<BenchCluster> {
  if (backend === "sqlite") {
    if (n !== 1) throw new Error("SQLite runs one instance only");
    const peer = await startCloudPeer(path.join(dir, "cloud-0"), { quic: false });
    return { backend, info: peer.info, instances: [peer], stop: () => peer.stop() };
  }
  let pg: PgServer | undefined;
  let nats: NatsServer | undefined;
  let balancer: TcpBalancer | undefined;
  const instances: CloudPeer[] = [];
  const stop = async () => {
    await balancer?.close();
    await Promise.allSettled(instances.map((p) => p.stop()));
    await nats?.stop();
    pg?.stop();
  };
  try {
    pg = await startPostgres();
    nats = await startNats();
    balancer = await startTcpBalancer([]);
    // One issuer for all: a token names the URL clients use (the balancer's), whichever instance signed it.
    const env = {
      CLOUD_DATABASE: await pg.createDatabase("bench"),
      CLOUD_NATS: nats.url,
      CLOUD_PUBLIC_URL: balancer.url,
    };
    // One after the other: the first migrates, the others find the schema done.
    for (let i = 0; i < n; i++) {
      instances.push(await startCloudPeer(path.join(dir, `cloud-${i}`), { quic: false, env, setup: i === 0 }));
      balancer.setBackends(instances.map((p) => Number(new URL(p.info.url).port)));
    }
    const pid = Number(fs.readFileSync(path.join(pg.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
    return { backend, info: { ...instances[0]!.info, url: balancer.url }, instances, postgresPid: pid, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
