// Cross-instance latency of the scale-out bench: a sample of edges sends its upstream straight to one instance
// (its points carry their due time, `stamp`), and a downstream on the next instance (viewer edges of the same
// project, one connection per instance) receives them through the NATS relay. A point's latency is from its due
// time to its arrival downstream, on CLOCK_MONOTONIC, which the edges' client processes share with this one.
// With one instance the downstream is on the same instance (the relay inside one peer, for reference).
import { connectWebSocket } from "../proto/transport/ws/client.js";
import { LatencySamples, monoNs, stampOf } from "../runtime/device-bench/latency.js";
import { fetchToken } from "../runtime/deferred/cloud-auth.js";
import { IscpClient } from "../runtime/iscp/iscp-client.js";
import type { EdgeSpec } from "./edges-load.js";

export interface DownstreamSampler {
  /** Starts a new window (samples so far are dropped). */
  reset(): void;
  /** The window's latency and points received. */
  summary(): ReturnType<LatencySamples["summary"]>;
  close(): Promise<void>;
}

/**
 * Points `sample` of `edges` (stamp, upstream on instance i % n), and opens a downstream for each on instance
 * (i + 1) % n with the `viewers` (one per instance).
 */
export async function sampleCrossInstance(o: {
  instanceUrls: string[];
  projectUuid: string;
  edges: EdgeSpec[];
  sample: number;
  viewers: EdgeSpec[];
}): Promise<DownstreamSampler> {
  const n = o.instanceUrls.length;
  const sampled = o.edges.slice(0, Math.min(o.sample, o.edges.length));
  sampled.forEach((e, i) => Object.assign(e, { url: o.instanceUrls[i % n], stamp: true }));
  let samples = new LatencySamples();
  const clients: IscpClient[] = [];
  try {
    for (let inst = 0; inst < n; inst++) {
      const watched = sampled.filter((_, i) => (i + 1) % n === inst);
      if (watched.length === 0) continue;
      const url = o.instanceUrls[inst]!;
      const viewer = o.viewers[inst]!;
      const token = await fetchToken({
        server_url: url,
        project_uuid: o.projectUuid,
        edge_uuid: viewer.uuid,
        client_secret: viewer.secret,
      });
      const client = await IscpClient.connect({
        transport: () => connectWebSocket({ url: `${url.replace(/^http/, "ws")}/api/iscp/connect` }),
        token: token.accessToken,
        nodeId: viewer.uuid,
        projectUuid: o.projectUuid,
        reconnect: false,
        pingTimeoutSec: 10,
      });
      clients.push(client);
      const ds = await client.openDownstream({
        filters: watched.map((e) => ({ sourceNodeId: e.uuid, dataFilters: [{ name: "bench/edge", type: "bytes" }] })),
      });
      ds.onChunk((c) => {
        const now = monoNs();
        for (const g of c.groups)
          for (const p of g.dataPoints) {
            const due = stampOf(p.payload);
            if (due !== undefined) samples.add((now - due) / 1e6);
          }
      });
    }
  } catch (e) {
    await Promise.allSettled(clients.map((c) => c.close()));
    throw e;
  }
  return {
    reset: () => void (samples = new LatencySamples()),
    summary: () => samples.summary(),
    close: async () => void (await Promise.allSettled(clients.map((c) => c.close()))),
  };
}
