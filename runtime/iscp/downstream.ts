// Client downstream: resolves upstream and data-ID aliases (which the client assigns and reports
// in its periodic DownstreamChunkAck), delivers chunks and metadata to handlers.
import { iscp2, QoS, ResultCode } from "../../proto/wire/message.js";
import { toBigInt } from "../../proto/wire/long.js";
import { bytesToUuid } from "../../proto/wire/uuid.js";
import type { IscpClient } from "./iscp-client.js";

export interface DownstreamOptions {
  /** Per source node: data filters with `#` / `+` wildcards on `/` levels. */
  filters: { sourceNodeId: string; dataFilters: { name: string; type: string }[] }[];
  qos?: iscp2.QoS;
  expiryIntervalSec?: number;
  omitEmptyChunk?: boolean;
  /** How often received chunks are acked, ms. */
  ackIntervalMs?: number;
  /** DataIDs given aliases up front. */
  dataIds?: { name: string; type: string }[];
}

export interface UpstreamIdentity {
  sessionId: string;
  streamId: string;
  sourceNodeId: string;
}
export interface ReceivedGroup {
  dataId: { name: string; type: string };
  dataPoints: { elapsedTime: bigint; payload: Uint8Array }[];
}
export interface ReceivedChunk {
  upstream: UpstreamIdentity;
  sequenceNumber: number;
  groups: ReceivedGroup[];
}

const keyOf = (name: string, type: string) => `${type}\u0000${name}`;

export class ClientDownstream {
  streamId = "";
  streamIdBytes: Uint8Array = new Uint8Array(16);
  private readonly upstreamsByAlias = new Map<number, { id: UpstreamIdentity; bytes: Uint8Array }>();
  private readonly upstreamAliasById = new Map<string, number>();
  private readonly dataIdsByAlias = new Map<number, { name: string; type: string }>();
  private readonly dataAliasByKey = new Map<string, number>();
  private nextUpAlias = 1;
  private nextDataAlias = 1;
  private ackId = 0;
  private results: iscp2.IDownstreamChunkResult[] = [];
  private newUpAliases: Record<number, iscp2.IUpstreamInfo> = {};
  private newDataAliases: Record<number, iscp2.IDataID> = {};
  private readonly ackTimer: NodeJS.Timeout;
  private readonly chunkHandlers: ((c: ReceivedChunk) => void)[] = [];
  private readonly metaHandlers: ((m: iscp2.IDownstreamMetadata) => void)[] = [];
  private readonly errorHandlers: ((e: Error) => void)[] = [];
  private closed = false;

  constructor(
    private readonly conn: IscpClient,
    readonly alias: number,
    private readonly opts: DownstreamOptions,
  ) {
    for (const d of opts.dataIds ?? []) {
      const a = this.nextDataAlias++;
      this.dataIdsByAlias.set(a, d);
      this.dataAliasByKey.set(keyOf(d.name, d.type), a);
    }
    this.ackTimer = setInterval(() => this.sendAck(), opts.ackIntervalMs ?? 100);
  }

  /** How long the broker keeps the stream for a resume, s. */
  get expiryIntervalSec(): number {
    return this.opts.expiryIntervalSec ?? 30;
  }

  /** @internal */
  openRequest(requestId: number): iscp2.IDownstreamOpenRequest {
    const declared: Record<number, iscp2.IDataID> = {};
    for (const [a, d] of this.dataIdsByAlias) declared[a] = d;
    return {
      requestId,
      desiredStreamIdAlias: this.alias,
      downstreamFilters: this.opts.filters,
      expiryInterval: this.expiryIntervalSec,
      dataIdAliases: declared,
      qos: this.opts.qos ?? QoS.RELIABLE,
      omitEmptyChunk: this.opts.omitEmptyChunk ?? false,
    };
  }

  /** @internal */
  opened(r: iscp2.IDownstreamOpenResponse): void {
    this.streamIdBytes = r.assignedStreamId!;
    this.streamId = bytesToUuid(r.assignedStreamId);
  }

  /** Calls `cb` with every chunk received on this stream. */
  onChunk(cb: (c: ReceivedChunk) => void): void {
    this.chunkHandlers.push(cb);
  }

  /** @internal the connection hands over a DownstreamChunk of this stream (from a frame or a datagram). */
  receiveChunk(m: iscp2.IDownstreamChunk): void {
    let up: { id: UpstreamIdentity; bytes: Uint8Array } | undefined;
    if (m.upstreamInfo) {
      const bytes = m.upstreamInfo.streamId!;
      const id = {
        sessionId: m.upstreamInfo.sessionId ?? "",
        streamId: bytesToUuid(bytes),
        sourceNodeId: m.upstreamInfo.sourceNodeId ?? "",
      };
      const known = this.upstreamAliasById.get(id.streamId);
      if (known) up = this.upstreamsByAlias.get(known);
      else {
        const a = this.nextUpAlias++;
        up = { id, bytes };
        this.upstreamsByAlias.set(a, up);
        this.upstreamAliasById.set(id.streamId, a);
        this.newUpAliases[a] = { sessionId: id.sessionId, streamId: bytes, sourceNodeId: id.sourceNodeId };
      }
    } else {
      up = this.upstreamsByAlias.get(m.upstreamAlias ?? 0);
    }
    if (!up) return this.fail(new Error(`unknown upstream alias ${m.upstreamAlias ?? 0}`));
    const groups: ReceivedGroup[] = [];
    for (const g of m.streamChunk?.dataPointGroups ?? []) {
      let d: { name: string; type: string } | undefined;
      if (g.dataId) {
        d = { name: g.dataId.name ?? "", type: g.dataId.type ?? "" };
        const k = keyOf(d.name, d.type);
        if (!this.dataAliasByKey.has(k)) {
          const a = this.nextDataAlias++;
          this.dataIdsByAlias.set(a, d);
          this.dataAliasByKey.set(k, a);
          this.newDataAliases[a] = d;
        }
      } else {
        d = this.dataIdsByAlias.get(g.dataIdAlias ?? 0);
        if (!d) return this.fail(new Error(`unknown data id alias ${g.dataIdAlias ?? 0}`));
      }
      groups.push({
        dataId: d,
        dataPoints: (g.dataPoints ?? []).map((p) => ({
          elapsedTime: toBigInt(p.elapsedTime),
          payload: p.payload ?? new Uint8Array(0),
        })),
      });
    }
    const seq = m.streamChunk?.sequenceNumber ?? 0;
    this.results.push({
      streamIdOfUpstream: up.bytes,
      sequenceNumberInUpstream: seq,
      resultCode: ResultCode.SUCCEEDED,
      resultString: "OK",
    });
    const chunk = { upstream: up.id, sequenceNumber: seq, groups };
    for (const h of this.chunkHandlers) h(chunk);
  }

  /** Calls `cb` with every metadata message received on this stream. */
  onMetadata(cb: (m: iscp2.IDownstreamMetadata) => void): void {
    this.metaHandlers.push(cb);
  }

  /** @internal the connection hands over a DownstreamMetadata of this stream. */
  receiveMetadata(md: iscp2.IDownstreamMetadata): void {
    for (const h of this.metaHandlers) h(md);
  }

  onError(cb: (e: Error) => void): void {
    this.errorHandlers.push(cb);
  }

  private fail(e: Error): void {
    for (const h of this.errorHandlers) h(e);
  }

  private sendAck(): void {
    if (this.closed || this.conn.state !== "open") return;
    if (
      this.results.length === 0 &&
      Object.keys(this.newUpAliases).length === 0 &&
      Object.keys(this.newDataAliases).length === 0
    )
      return;
    const ack: iscp2.IDownstreamChunkAck = {
      streamIdAlias: this.alias,
      ackId: ++this.ackId,
      results: this.results,
      upstreamAliases: this.newUpAliases,
      dataIdAliases: this.newDataAliases,
    };
    if (!this.conn.send({ downstreamChunkAck: ack })) return;
    this.results = [];
    this.newUpAliases = {};
    this.newDataAliases = {};
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.sendAck();
    this.dispose();
    this.conn.forget(this);
    await this.conn.request(
      (requestId) => ({ downstreamCloseRequest: { requestId, streamId: this.streamIdBytes } }),
      "downstreamCloseResponse",
    );
  }

  /** @internal */
  lost(e: Error): void {
    this.dispose();
    this.fail(e);
  }

  /** @internal */
  dispose(): void {
    this.closed = true;
    clearInterval(this.ackTimer);
  }
}
