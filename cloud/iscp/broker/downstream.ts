// Server-side state of one downstream: the client's alias tables, the bounded relay queue
// (backpressure: drop-oldest), unacked RELIABLE chunks for re-sending after a resume, and
// the encoding of DownstreamChunks split to the outgoing frame limit.
import { iscp2, QoS, encodeMessage, type Encoding } from "../../../proto/wire/message.js";
import type { RawPointGroup } from "../../../proto/wire/chunk-scan.js";
import { bytesToUuid } from "../../../proto/wire/uuid.js";
import { DataIdMatcher } from "./filter.js";
import { dataIdKey, type DataIdRef } from "./upstream.js";

export interface UpstreamRef {
  id: string;
  idBytes: Uint8Array;
  sessionId: string;
  nodeId: string;
  /** The hub's key of its project and node, when known (a local upstream: no string made per chunk). */
  nodeKey?: string;
}
export interface RelayGroup {
  ref: DataIdRef;
  readonly points: iscp2.IDataPoint[];
  bytes: number;
  /** The points as received (scan path), for storage. */
  raw?: RawPointGroup;
}
export interface RelayChunk {
  up: UpstreamRef;
  seq: number;
  groups: RelayGroup[];
  bytes: number;
}

export interface DownstreamFilterSpec {
  sourceNodeId: string;
  matcher: DataIdMatcher;
}

/** What a downstream needs from the connection it is attached to. */
export interface DownstreamOwner {
  readonly encoding: Encoding;
  sendMessage(msg: iscp2.IMessage): void;
  nextServerRequestId(): number;
  /** Relay data was queued: pull when the transport has room. */
  wake(): void;
}

export interface DownstreamCounters {
  sentChunks: number;
  droppedChunks: number;
  queuedChunks: number;
  queuedBytes: number;
  unackedChunks: number;
}

export class DownstreamStream {
  owner: DownstreamOwner | null = null;
  expiryTimer: NodeJS.Timeout | undefined;
  readonly queue: RelayChunk[] = [];
  private queueHead = 0;
  queuedBytes = 0;
  sentChunks = 0;
  droppedChunks = 0;
  /** Client-declared aliases: upstream stream id -> alias, DataID key -> alias. */
  readonly upstreamAliases = new Map<string, number>();
  readonly dataIdAliases = new Map<string, number>();
  private readonly unacked = new Map<string, RelayChunk>();
  private readonly pendingMetadata: iscp2.IDownstreamMetadata[] = [];

  constructor(
    readonly id: string,
    readonly idBytes: Uint8Array,
    public alias: number,
    readonly projectUuid: string,
    readonly subjectUuid: string,
    readonly filters: DownstreamFilterSpec[],
    readonly qos: iscp2.QoS,
    readonly omitEmptyChunk: boolean,
    readonly expiryMs: number,
    private readonly limits: {
      queueBytes: number;
      queueChunks: number;
      unacked: number;
      maxFrame: number;
      maxAliases: number;
    },
  ) {
    for (const f of filters) {
      const list = this.byNode.get(f.sourceNodeId);
      if (list) list.push(f.matcher);
      else this.byNode.set(f.sourceNodeId, [f.matcher]);
    }
  }

  /** Matchers per source node, from all filters naming it. */
  private readonly byNode = new Map<string, DataIdMatcher[]>();

  get sourceNodeIds(): Set<string> {
    return new Set(this.byNode.keys());
  }

  get queuedChunks(): number {
    return this.queue.length - this.queueHead;
  }

  counters(): DownstreamCounters {
    return {
      sentChunks: this.sentChunks,
      droppedChunks: this.droppedChunks,
      queuedChunks: this.queuedChunks,
      queuedBytes: this.queuedBytes,
      unackedChunks: this.unacked.size,
    };
  }

  /** Groups of an upstream chunk that this downstream wants, or undefined when the node does not match. */
  select(nodeId: string, groups: RelayGroup[]): RelayGroup[] | undefined {
    const matchers = this.byNode.get(nodeId);
    if (!matchers) return undefined;
    if (matchers.length === 1) return groups.filter((g) => matchers[0]!.matches(g.ref.name, g.ref.type));
    return groups.filter((g) => matchers.some((m) => m.matches(g.ref.name, g.ref.type)));
  }

  /** Queues a chunk; beyond the buffer bounds the oldest queued chunks are dropped (any QoS). */
  enqueue(chunk: RelayChunk): void {
    if (this.omitEmptyChunk && chunk.groups.length === 0) return;
    this.queue.push(chunk);
    this.queuedBytes += chunk.bytes;
    while (
      this.queuedChunks > 1 &&
      (this.queuedBytes > this.limits.queueBytes || this.queuedChunks > this.limits.queueChunks)
    ) {
      this.shift();
      this.droppedChunks++;
    }
    this.owner?.wake();
  }

  shift(): RelayChunk | undefined {
    if (this.queueHead >= this.queue.length) return undefined;
    const c = this.queue[this.queueHead]!;
    this.queue[this.queueHead] = undefined as unknown as RelayChunk;
    this.queueHead++;
    if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    }
    this.queuedBytes -= c.bytes;
    return c;
  }

  /** Encodes the next queued chunk into frames no larger than the frame limit. */
  takeFrames(): Uint8Array[] | undefined {
    const c = this.shift();
    if (!c || !this.owner) return undefined;
    this.sentChunks++;
    if (this.qos === QoS.RELIABLE) {
      this.unacked.set(`${c.up.id}:${c.seq}`, c);
      if (this.unacked.size > this.limits.unacked) this.unacked.delete(this.unacked.keys().next().value!);
    }
    return this.encodeSplit(c, c.groups);
  }

  private encodeSplit(c: RelayChunk, groups: RelayGroup[]): Uint8Array[] {
    const frame = encodeMessage({ downstreamChunk: this.chunkMessage(c, groups) }, this.owner!.encoding);
    if (frame.length <= this.limits.maxFrame) return [frame];
    // Too large for one frame: the same sequence number goes out as several chunks.
    if (groups.length > 1) {
      const mid = groups.length >> 1;
      return [...this.encodeSplit(c, groups.slice(0, mid)), ...this.encodeSplit(c, groups.slice(mid))];
    }
    const g = groups[0]!;
    if (g.points.length > 1) {
      const mid = g.points.length >> 1;
      const a = { ref: g.ref, points: g.points.slice(0, mid), bytes: 0 };
      const b = { ref: g.ref, points: g.points.slice(mid), bytes: 0 };
      return [...this.encodeSplit(c, [a]), ...this.encodeSplit(c, [b])];
    }
    return []; // a single point above the frame limit cannot be delivered
  }

  private chunkMessage(c: RelayChunk, groups: RelayGroup[]): iscp2.IDownstreamChunk {
    const upAlias = this.upstreamAliases.get(c.up.id);
    return {
      streamIdAlias: this.alias,
      ...(upAlias
        ? { upstreamAlias: upAlias }
        : { upstreamInfo: { sessionId: c.up.sessionId, streamId: c.up.idBytes, sourceNodeId: c.up.nodeId } }),
      streamChunk: {
        sequenceNumber: c.seq,
        dataPointGroups: groups.map((g) => {
          const a = this.dataIdAliases.get(g.ref.key);
          return a
            ? { dataIdAlias: a, dataPoints: g.points }
            : { dataId: { name: g.ref.name, type: g.ref.type }, dataPoints: g.points };
        }),
      },
    };
  }

  /** Applies a DownstreamChunkAck from the client. */
  /**
   * Takes the client's acks and alias declarations. Each alias table holds at most `maxAliases`
   * entries (a client naming endless made-up streams or data IDs must not grow the broker's memory);
   * returns false when declarations beyond that were ignored.
   */
  applyAck(ack: iscp2.IDownstreamChunkAck): boolean {
    const max = this.limits.maxAliases;
    let fits = true;
    for (const [a, info] of Object.entries(ack.upstreamAliases ?? {})) {
      if (info.streamId?.length !== 16) continue;
      const key = bytesToUuid(info.streamId);
      if (this.upstreamAliases.size >= max && !this.upstreamAliases.has(key)) fits = false;
      else this.upstreamAliases.set(key, Number(a));
    }
    for (const [a, d] of Object.entries(ack.dataIdAliases ?? {})) {
      const key = dataIdKey(d.name ?? "", d.type ?? "");
      if (this.dataIdAliases.size >= max && !this.dataIdAliases.has(key)) fits = false;
      else this.dataIdAliases.set(key, Number(a));
    }
    if (this.unacked.size > 0) {
      for (const r of ack.results ?? []) {
        if (r.streamIdOfUpstream?.length === 16)
          this.unacked.delete(`${bytesToUuid(r.streamIdOfUpstream)}:${r.sequenceNumberInUpstream ?? 0}`);
      }
    }
    return fits;
  }

  /** After a resume, unacked RELIABLE chunks go out again ahead of newer ones. */
  requeueUnacked(): void {
    if (this.unacked.size === 0) return;
    const again = [...this.unacked.values()];
    this.unacked.clear();
    const rest = this.queue.slice(this.queueHead);
    this.queue.length = 0;
    this.queueHead = 0;
    this.queue.push(...again, ...rest);
    this.queuedBytes += again.reduce((n, c) => n + c.bytes, 0);
  }

  /** Metadata goes out at once when attached, otherwise waits (bounded) for a resume. */
  sendMetadata(meta: iscp2.IDownstreamMetadata): void {
    if (!this.owner) {
      if (this.pendingMetadata.length < 256) this.pendingMetadata.push(meta);
      return;
    }
    this.owner.sendMessage({
      downstreamMetadata: { ...meta, requestId: this.owner.nextServerRequestId(), streamIdAlias: this.alias },
    });
  }

  flushPendingMetadata(): void {
    const pending = this.pendingMetadata.splice(0);
    for (const m of pending) this.sendMetadata(m);
  }

  dispose(): void {
    this.owner = null;
    clearTimeout(this.expiryTimer);
    this.queue.length = 0;
    this.queueHead = 0;
    this.queuedBytes = 0;
    this.unacked.clear();
  }
}
