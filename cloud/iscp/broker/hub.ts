// The broker's shared state: every stream and connection, routing from upstreams to the
// downstreams whose filters match, metadata fan-out, E2E calls and stream expiry.
import { iscp2 } from "../../../proto/wire/message.js";
import { toLong } from "../../../proto/wire/long.js";
import { keepFrame } from "../../../proto/transport/received-frames.js";
import type { IscpHooks, IscpLimits, Logger } from "./options.js";
import type { DownstreamStream, RelayGroup, UpstreamRef } from "./downstream.js";
import type { UpstreamStream } from "./upstream.js";
import { StoreBudget } from "./store-budget.js";

/** What the hub needs from a live connection. */
export interface HubConn {
  readonly projectUuid: string;
  readonly nodeId: string;
  /** False when the call did not fit in one of the client's frames. */
  deliverCall(call: iscp2.IDownstreamCall): boolean;
}

/**
 * The other broker instances, when several cloud peers share the work (cloud/iscp/service/cluster-relay.ts):
 * what this hub relays or announces goes to them too, and they are told which source nodes local
 * downstreams want, so they hear only about those.
 */
export interface HubRemote {
  chunk(up: UpstreamRef, projectUuid: string, seq: number, groups: RelayGroup[]): void;
  metadata(projectUuid: string, sourceNodeId: string, meta: iscp2.IDownstreamMetadata): void;
  /** Local downstreams now want (true) or no longer want (false) this source node. */
  interest(projectUuid: string, sourceNodeId: string, wanted: boolean): void;
  /**
   * Asks the instance holding this upstream (if any still runs) to let it go: "released" when it did,
   * "attached" when a live connection still uses it there, undefined when no instance answered.
   */
  release(streamId: string): Promise<"released" | "attached" | undefined>;
  /** An E2E call for a node connected to no local connection: delivered by the instance that has it. */
  call(
    projectUuid: string,
    destinationNodeId: string,
    call: iscp2.IDownstreamCall,
  ): Promise<{ found: number; delivered: number }>;
}

export const nodeKey = (project: string, node: string) => `${project}\n${node}`;

/** Nodes whose last base times are remembered for new downstreams (least recently updated go first). */
export const MAX_BASE_TIME_NODES = 4096;

export class IscpHub {
  readonly conns = new Set<HubConn>();
  readonly upstreams = new Map<string, UpstreamStream>();
  readonly downstreams = new Map<string, DownstreamStream>();
  private readonly byNode = new Map<string, Set<DownstreamStream>>();
  private readonly lastBaseTimes = new Map<string, Map<string, iscp2.IBaseTime>>();
  private closed = false;
  /** Set once by the cluster relay; absent for one peer alone. */
  remote: HubRemote | undefined;
  /** Chunks waiting for their storage commit, shared between connections. */
  readonly storeBudget: StoreBudget;

  constructor(
    readonly limits: IscpLimits,
    readonly hooks: IscpHooks,
    readonly logger: Logger,
  ) {
    this.storeBudget = new StoreBudget(limits);
  }

  addUpstream(up: UpstreamStream): void {
    this.upstreams.set(up.id, up);
  }

  addDownstream(ds: DownstreamStream): void {
    this.downstreams.set(ds.id, ds);
    for (const node of ds.sourceNodeIds) {
      const k = nodeKey(ds.projectUuid, node);
      let set = this.byNode.get(k);
      if (!set) {
        this.byNode.set(k, (set = new Set()));
        this.remote?.interest(ds.projectUuid, node, true);
      }
      set.add(ds);
    }
  }

  removeDownstream(ds: DownstreamStream): void {
    this.downstreams.delete(ds.id);
    for (const node of ds.sourceNodeIds) {
      const k = nodeKey(ds.projectUuid, node);
      const set = this.byNode.get(k);
      set?.delete(ds);
      if (set?.size === 0) {
        this.byNode.delete(k);
        this.remote?.interest(ds.projectUuid, node, false);
      }
    }
    ds.dispose();
  }

  /**
   * Removes an upstream for good; `normal` is false when it expired without a close. Resolves once the close
   * hook is done (its failure is logged), so a close response can tell the client the end was recorded.
   */
  removeUpstream(
    up: UpstreamStream,
    close: { totalDataPoints: bigint; finalSequenceNumber: number; closeSession: boolean; normal: boolean },
  ): Promise<void> {
    if (!this.upstreams.delete(up.id)) return Promise.resolve();
    up.dispose();
    this.hooks.upstreamStates
      ?.removed(up.id)
      .catch((e: unknown) => this.logger.warn({ err: String(e), streamId: up.id }, "iscp upstream state not removed"));
    const meta: iscp2.IDownstreamMetadata = close.normal
      ? {
          upstreamNormalClose: {
            streamId: up.idBytes,
            sessionId: up.info.sessionId,
            totalDataPoints: toLong(close.totalDataPoints, true),
            finalSequenceNumber: close.finalSequenceNumber,
          },
        }
      : { upstreamAbnormalClose: { streamId: up.idBytes, sessionId: up.info.sessionId } };
    this.publishMetadata(up.info.projectUuid, up.info.nodeId, meta);
    if (!this.hooks.onUpstreamClose) return Promise.resolve();
    return Promise.resolve()
      .then(() => this.hooks.onUpstreamClose!(up.info, close))
      .catch((e: unknown) => this.logger.warn({ err: String(e), streamId: up.id }, "iscp onUpstreamClose hook failed"));
  }

  /**
   * Another instance resumes this upstream: a detached one is let go here (no close: the stream goes on
   * there); undefined when it is not held here.
   */
  releaseUpstream(streamId: string): "released" | "attached" | undefined {
    const up = this.upstreams.get(streamId);
    if (!up) return undefined;
    if (up.owner) return "attached";
    this.upstreams.delete(streamId);
    up.dispose();
    this.logger.info({ streamId }, "iscp upstream handed to another instance");
    return "released";
  }

  /** Fan-out of one new upstream chunk to every matching downstream in the same project. */
  relay(up: UpstreamRef, projectUuid: string, seq: number, groups: RelayGroup[]): void {
    this.remote?.chunk(up, projectUuid, seq, groups);
    this.relayHere(up, projectUuid, seq, groups);
  }

  /** Fan-out to this instance's downstreams only (a chunk another instance received). */
  relayHere(up: UpstreamRef, projectUuid: string, seq: number, groups: RelayGroup[]): void {
    const set = this.byNode.get(up.nodeKey ?? nodeKey(projectUuid, up.nodeId));
    if (!set) return;
    let queued = false;
    for (const ds of set) {
      const selected = ds.select(up.nodeId, groups);
      if (!selected) continue;
      const bytes = 64 + selected.reduce((n, g) => n + g.bytes, 0);
      ds.enqueue({ up, seq, groups: selected, bytes });
      queued = true;
    }
    // The queues keep views of the received frame (every group is of one frame) for as long as they need.
    if (queued) keepFrame(groups[0]?.raw?.raw);
  }

  /** Sends metadata about `sourceNodeId` to every downstream whose filters name that node. */
  publishMetadata(projectUuid: string, sourceNodeId: string, meta: iscp2.IDownstreamMetadata): void {
    this.remote?.metadata(projectUuid, sourceNodeId, meta);
    this.publishMetadataHere(projectUuid, sourceNodeId, meta);
  }

  /** Metadata to this instance's downstreams only (another instance's upstream). */
  publishMetadataHere(projectUuid: string, sourceNodeId: string, meta: iscp2.IDownstreamMetadata): void {
    if (meta.baseTime) {
      const k = nodeKey(projectUuid, sourceNodeId);
      let m = this.lastBaseTimes.get(k);
      this.lastBaseTimes.delete(k); // re-inserted: Map order is then least recently updated first
      this.lastBaseTimes.set(k, (m ??= new Map()));
      if (this.lastBaseTimes.size > MAX_BASE_TIME_NODES)
        this.lastBaseTimes.delete(this.lastBaseTimes.keys().next().value!);
      const key = `${meta.baseTime.sessionId}\n${meta.baseTime.name}`;
      m.delete(key);
      m.set(key, meta.baseTime);
      if (m.size > 64) m.delete(m.keys().next().value!);
    }
    const set = this.byNode.get(nodeKey(projectUuid, sourceNodeId));
    if (!set) return;
    for (const ds of set) ds.sendMetadata({ ...meta, sourceNodeId });
  }

  /** Source nodes local downstreams want, as `[project, node]` (a relay that starts late subscribes to them). */
  wantedNodes(): Array<[string, string]> {
    return [...this.byNode.keys()].map((k) => k.split("\n") as [string, string]);
  }

  /** A new downstream learns the base times already known for its nodes. */
  replayBaseTimes(ds: DownstreamStream): void {
    for (const node of ds.sourceNodeIds) {
      const m = this.lastBaseTimes.get(nodeKey(ds.projectUuid, node));
      for (const bt of m?.values() ?? []) ds.sendMetadata({ baseTime: bt, sourceNodeId: node });
    }
  }

  /** Relays an E2E call to every connection of the destination node: how many there are, how many got it. */
  deliverCall(
    projectUuid: string,
    destinationNodeId: string,
    call: iscp2.IDownstreamCall,
  ): { found: number; delivered: number } {
    let found = 0;
    let delivered = 0;
    for (const c of this.conns) {
      if (c.projectUuid === projectUuid && c.nodeId === destinationNodeId) {
        found++;
        if (c.deliverCall(call)) delivered++;
      }
    }
    return { found, delivered };
  }

  /** Starts the expiry clock of a stream whose connection went away. */
  scheduleUpstreamExpiry(up: UpstreamStream): void {
    clearTimeout(up.expiryTimer);
    up.expiryTimer = setTimeout(() => {
      if (up.owner) return;
      this.logger.info({ streamId: up.id }, "iscp upstream expired");
      void this.removeUpstream(up, {
        totalDataPoints: up.totalDataPoints,
        finalSequenceNumber: up.lastSequenceNumber,
        closeSession: false,
        normal: false,
      });
    }, up.expiryMs);
    up.expiryTimer.unref?.();
  }

  scheduleDownstreamExpiry(ds: DownstreamStream): void {
    clearTimeout(ds.expiryTimer);
    ds.expiryTimer = setTimeout(() => {
      if (ds.owner) return;
      this.logger.info({ streamId: ds.id }, "iscp downstream expired");
      this.removeDownstream(ds);
    }, ds.expiryMs);
    ds.expiryTimer.unref?.();
  }

  /** Effective expiry: the requested interval, but never below the grace floor. */
  expiryMs(requestedSec: number): number {
    return Math.max(requestedSec, this.limits.expiryGraceFloorSec) * 1000;
  }

  stats(): {
    connections: number;
    upstreams: number;
    baseTimeNodes: number;
    downstreams: Record<string, ReturnType<DownstreamStream["counters"]> & { attached: boolean }>;
  } {
    const downstreams: Record<string, ReturnType<DownstreamStream["counters"]> & { attached: boolean }> = {};
    for (const [id, ds] of this.downstreams) downstreams[id] = { ...ds.counters(), attached: ds.owner !== null };
    return {
      connections: this.conns.size,
      upstreams: this.upstreams.size,
      baseTimeNodes: this.lastBaseTimes.size,
      downstreams,
    };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    this.closed = true;
    for (const up of this.upstreams.values()) up.dispose();
    for (const ds of this.downstreams.values()) ds.dispose();
    this.upstreams.clear();
    this.downstreams.clear();
    this.byNode.clear();
  }
}
