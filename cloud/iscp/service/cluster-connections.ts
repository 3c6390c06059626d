// The edges connected to every cloud peer of a cluster. An edge holds one connection to one peer, so a
// list asked of another peer (behind a balancer: any peer) must know the others' connections. Each peer
// publishes its own list once a second on one subject and keeps what it hears for a few seconds; a list
// is then answered from memory at once, at most about a second old for connections of other peers.
import type { ClusterBus } from "../../cluster/service/bus.js";
import { bytesJson, jsonBytes } from "../../cluster/service/bus.js";
import type { IscpBroker } from "../broker/broker.js";
import type { DataRate } from "../broker/rate-meter.js";

const SUBJECT = "cloud.iscp.connections";
const PUBLISH_EVERY_MS = 1_000;
/** A peer not heard from for this long (stopped, killed, cut off) lists nothing. */
const FORGET_AFTER_MS = 3_500;

export interface EdgeConnectionItem {
  edge_uuid: string;
  transport: string;
  upstreams: number;
  downstreams: number;
  data_rate: DataRate;
}
interface Announcement {
  /** The announcing peer's instance id. */
  i: string;
  /** Its open connections with a node id, by project. */
  c: Array<EdgeConnectionItem & { project: string }>;
}

/** This peer's own open connections with a node id (an edge's node id is its UUID). */
function ownConnections(broker: IscpBroker): Array<EdgeConnectionItem & { project: string }> {
  return broker
    .connections()
    .filter((c) => c.isOpen && c.nodeId !== "")
    .map((c) => ({
      project: c.projectUuid,
      edge_uuid: c.nodeId,
      transport: c.transport.kind,
      upstreams: c.upstreams.size,
      downstreams: c.downstreams.size,
      data_rate: c.received.rate(),
    }));
}

export interface ClusterConnections {
  /** The project's connections on this peer and (with --nats) on the others. */
  list(project: string): EdgeConnectionItem[];
  /** How many other peers it remembers (those heard from within the last few seconds, and the one heard last). */
  peers(): number;
  stop(): void;
}

export function shareConnections(
  broker: IscpBroker,
  bus: ClusterBus,
  now: () => number = Date.now,
): ClusterConnections {
  const heard = new Map<string, { at: number; items: Announcement["c"] }>();
  const strip = ({ project: _, ...item }: EdgeConnectionItem & { project: string }): EdgeConnectionItem => item;
  const list = (project: string) => {
    const own = ownConnections(broker).filter((c) => c.project === project);
    const others = [...heard.values()]
      .filter((h) => now() - h.at < FORGET_AFTER_MS)
      .flatMap((h) => h.items.filter((c) => c.project === project));
    return [...own, ...others].map(strip);
  };
  const peers = () => heard.size;
  if (bus.kind === "in-process") return { list, peers, stop: () => {} };
  const unsubscribe = bus.subscribe(SUBJECT, (data) => {
    const a = bytesJson<Announcement>(data);
    if (a.i === bus.instanceId) return;
    // A peer's id is new at every start: a peer restarted, killed or gone is forgotten, or each start
    // would leave an entry in every other peer for good.
    const at = now();
    for (const [i, h] of heard) if (at - h.at >= FORGET_AFTER_MS) heard.delete(i);
    heard.set(a.i, { at, items: a.c });
  });
  const timer = setInterval(
    () => bus.publish(SUBJECT, jsonBytes({ i: bus.instanceId, c: ownConnections(broker) } satisfies Announcement)),
    PUBLISH_EVERY_MS,
  );
  timer.unref();
  return {
    list,
    peers,
    stop: () => {
      clearInterval(timer);
      unsubscribe();
    },
  };
}
