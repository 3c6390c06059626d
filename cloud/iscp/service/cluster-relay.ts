// iSCP across cloud peers: what one peer's broker relays goes over the cluster bus to the others, whose
// brokers fan it out to their own downstreams with the same filters. Core NATS, no JetStream: live
// fan-out is at most once like the in-process relay under pressure (a RELIABLE downstream's re-sends stay
// with the instance that holds it), and storage never depends on it (the upstream's instance stores).
//
// Subjects: `cloud.iscp.<project>.<source node>.chunk` and `.meta`. An instance subscribes to a node's
// chunks only while one of its downstreams wants that node; metadata (small, and base times must be known
// to later downstreams) it takes for every node. The chunks of one node received in one turn go in one
// message (relay-batch.ts); a downstream receives each as one DownstreamChunk with the upstream's sequence
// number, in order, as NATS keeps one publisher's order per subject.
import { iscp2 } from "../../../proto/wire/message.js";
import type { ClusterBus } from "../../cluster/service/bus.js";
import { subjectToken } from "../../cluster/service/bus.js";
import type { HubRemote, IscpHub } from "../broker/hub.js";
import type { RelayGroup } from "../broker/downstream.js";
import { dataIdKey } from "../broker/upstream.js";
import { readBatch, RelayBatcher } from "./relay-batch.js";

const PREFIX = "cloud.iscp";
/** How long an E2E call waits for the instance holding its destination (none answers when none holds it). */
const CALL_ASK_MS = 1_000;
/** How long a resume waits for the instance holding the upstream (none answers when it died). */
const RELEASE_ASK_MS = 1_000;
const nodeSubject = (project: string, node: string) => `${PREFIX}.${subjectToken(project)}.${subjectToken(node)}`;

interface MetaHeader {
  p: string;
  n: string;
}

/** `[u32 header length][header JSON][protobuf body]`. */
function frame(header: object, body: Uint8Array): Uint8Array {
  const h = Buffer.from(JSON.stringify(header));
  const out = Buffer.allocUnsafe(4 + h.length + body.length);
  out.writeUInt32BE(h.length, 0);
  h.copy(out, 4);
  out.set(body, 4 + h.length);
  return out;
}
function unframe<H>(data: Uint8Array): { header: H; body: Uint8Array } {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const n = b.readUInt32BE(0);
  return { header: JSON.parse(b.subarray(4, 4 + n).toString()) as H, body: b.subarray(4 + n) };
}

/** Connects a hub to the other instances; returns the stop function. */
export function attachClusterRelay(
  hub: IscpHub,
  bus: ClusterBus,
  warn: (msg: string, err: unknown) => void,
): () => void {
  if (bus.kind === "in-process") return () => {};
  const chunkSubs = new Map<string, () => void>();
  const batches = new RelayBatcher((subject, data) => bus.publish(subject, data));
  const subjects = new Map<string, string>();
  const remote: HubRemote = {
    chunk(up, projectUuid, seq, groups) {
      const key = up.nodeKey ?? `${projectUuid}\n${up.nodeId}`;
      let subject = subjects.get(key);
      if (subject === undefined) {
        if (subjects.size >= 65_536) subjects.clear();
        subjects.set(key, (subject = `${nodeSubject(projectUuid, up.nodeId)}.chunk`));
      }
      batches.add(subject, projectUuid, up, seq, groups);
    },
    metadata(projectUuid, sourceNodeId, meta) {
      bus.publish(
        `${nodeSubject(projectUuid, sourceNodeId)}.meta`,
        frame({ p: projectUuid, n: sourceNodeId } satisfies MetaHeader, iscp2.DownstreamMetadata.encode(meta).finish()),
      );
    },
    async call(projectUuid, destinationNodeId, call) {
      const answer = await bus.request(
        `${nodeSubject(projectUuid, destinationNodeId)}.call`,
        frame(
          { p: projectUuid, n: destinationNodeId } satisfies MetaHeader,
          iscp2.DownstreamCall.encode(call).finish(),
        ),
        CALL_ASK_MS,
      );
      return answer
        ? (JSON.parse(Buffer.from(answer).toString()) as { found: number; delivered: number })
        : { found: 0, delivered: 0 };
    },
    async release(streamId) {
      const answer = await bus.request(`${PREFIX}.release`, Buffer.from(streamId), RELEASE_ASK_MS);
      return answer ? (Buffer.from(answer).toString() as "released" | "attached") : undefined;
    },
    interest(projectUuid, sourceNodeId, wanted) {
      const subject = `${nodeSubject(projectUuid, sourceNodeId)}.chunk`;
      if (wanted && !chunkSubs.has(subject)) chunkSubs.set(subject, bus.subscribe(subject, receiveChunk));
      if (!wanted) {
        chunkSubs.get(subject)?.();
        chunkSubs.delete(subject);
      }
    },
  };

  function receiveChunk(data: Uint8Array): void {
    try {
      for (const { up, projectUuid, seq, chunk } of readBatch(data)) {
        const groups: RelayGroup[] = chunk.dataPointGroups.map((g) => {
          const name = g.dataId?.name ?? "";
          const type = g.dataId?.type ?? "";
          const points = g.dataPoints ?? [];
          const bytes = 16 + points.reduce((n, p) => n + 12 + (p.payload?.length ?? 0), 0);
          return { ref: { name, type, key: dataIdKey(name, type) }, points, bytes };
        });
        hub.relayHere(up, projectUuid, seq, groups);
      }
    } catch (e) {
      warn("iscp chunk from another instance not relayed", e);
    }
  }

  const unsubMeta = bus.subscribe(`${PREFIX}.*.*.meta`, (data) => {
    try {
      const { header: h, body } = unframe<MetaHeader>(data);
      hub.publishMetadataHere(h.p, h.n, iscp2.DownstreamMetadata.decode(body));
    } catch (e) {
      warn("iscp metadata from another instance not relayed", e);
    }
  });
  // E2E calls: only the instance where the destination is connected answers.
  const unsubCalls = bus.serve(`${PREFIX}.*.*.call`, (data) => {
    try {
      const { header: h, body } = unframe<MetaHeader>(data);
      const r = hub.deliverCall(h.p, h.n, iscp2.DownstreamCall.decode(body));
      return r.found > 0 ? Buffer.from(JSON.stringify(r)) : undefined;
    } catch (e) {
      warn("iscp call from another instance not delivered", e);
      return undefined;
    }
  });
  // An upstream resumed on another instance: only the instance holding it answers.
  const unsubRelease = bus.serve(`${PREFIX}.release`, (data) => {
    const r = hub.releaseUpstream(Buffer.from(data).toString());
    return r ? Buffer.from(r) : undefined;
  });
  hub.remote = remote;
  for (const [p, n] of hub.wantedNodes()) remote.interest(p, n, true);
  return () => {
    batches.flush();
    hub.remote = undefined;
    unsubMeta();
    unsubCalls();
    unsubRelease();
    for (const unsub of chunkSubs.values()) unsub();
    chunkSubs.clear();
  };
}
