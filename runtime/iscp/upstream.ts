// Client upstream: buffers points per DataID, flushes them as numbered chunks, learns data-ID
// aliases from acks, and (RELIABLE) re-sends unacked chunks with their original sequence numbers
// after a resume, as iscp-go does. UNRELIABLE chunks go on the transport's unreliable path (QUIC
// datagrams); those whose ack does not come in time are given up as lost (onLost), never re-sent.
// Stored chunks (the agent's queue) are encoded straight to protobuf bytes (chunk-frame.ts); with
// enc=json, and for points written here, chunks are built as message objects.
import { iscp2, QoS } from "../../proto/wire/message.js";
import { toLong } from "../../proto/wire/long.js";
import { bytesToUuid } from "../../proto/wire/uuid.js";
import { chunkGroups, chunkView, decodeChunk } from "../queue/chunk-codec.js";
import type { ChunkView } from "../../proto/wire/chunk-view.js";
import { encodeUpstreamChunkMessage } from "../../proto/wire/chunk-frame.js";
import { BufferPool } from "../../proto/wire/buffer-pool.js";
import type { IscpClient } from "./iscp-client.js";

export interface UpstreamOptions {
  sessionId: string;
  qos?: iscp2.QoS;
  /** Broker ack batching window, ms. */
  ackIntervalMs?: number;
  /** How long the broker keeps the stream for a resume, s. */
  expiryIntervalSec?: number;
  persist?: boolean;
  /** DataIDs to get aliases for in the open response. */
  dataIds?: { name: string; type: string }[];
  /** Flush automatically at this period (ms); manual flush() only when absent. */
  flushIntervalMs?: number;
  /** Flush as soon as this many payload bytes are buffered. */
  flushBytes?: number;
  /** Acks are awaited this long on close(). */
  closeTimeoutMs?: number;
  /** UNRELIABLE: a chunk without an ack after this long counts as lost (default 5000 ms). */
  lostAfterMs?: number;
}

export interface DataPointIn {
  elapsedTime: bigint | number;
  payload: Uint8Array;
}
export interface AckResult {
  sequenceNumber: number;
  resultCode: number;
  resultString: string;
}

interface PointGroup {
  name: string;
  type: string;
  points: iscp2.IDataPoint[];
}
/** What a chunk carries: points written here (grouped), or a stored chunk as decoded from the queue. */
type ChunkBody = { groups: readonly PointGroup[] } | { stored: ChunkView };

const keyOf = (name: string, type: string) => `${type}\u0000${name}`;
const pointsOf = (b: ChunkBody) => ("stored" in b ? b.stored.count : b.groups.reduce((n, g) => n + g.points.length, 0));

/** A stored chunk's points as message objects (the enc=json path). */
function storedGroups(c: ChunkView): PointGroup[] {
  return chunkGroups(decodeChunk(c.buffer)).map((g) => ({
    name: g.dataId.name,
    type: g.dataId.type,
    points: g.points.map((p) => ({ elapsedTime: toLong(Math.trunc(p.elapsedNs)), payload: p.payload })),
  }));
}
/** UNRELIABLE chunks awaiting an ack, at most; older ones count as lost. */
const MAX_UNRELIABLE_UNACKED = 10_000;

/** Frame buffers of every upstream of the process, back from the transport once written (buffer-pool.ts). */
const frames = new BufferPool();
const takeSendFrame = (n: number) => frames.take(n);

/** How long the broker keeps the stream after its connection goes (a resume's window), s. */
const expiryOf = (o: UpstreamOptions) => o.expiryIntervalSec ?? 30;

export class ClientUpstream {
  readonly streamId: string;
  readonly streamIdBytes: Uint8Array;
  alias: number;
  readonly qos: iscp2.QoS;
  private readonly aliases = new Map<string, number>();
  private buffer = new Map<string, PointGroup>();
  private bufferedBytes = 0;
  private seq = 0;
  /**
   * Chunks awaiting an ack, by sequence number. RELIABLE keeps their content: a resume sends them again
   * (re-encoded: the alias may change); the other QoS never send a chunk twice and keep only the number.
   */
  private readonly unacked = new Map<number, ChunkBody | undefined>();
  private lostTimer: NodeJS.Timeout | undefined;
  /** UNRELIABLE only: send time of each unacked chunk (same order as `unacked`). */
  private readonly sentAt = new Map<number, number>();
  private readonly lostHandlers: ((sequenceNumbers: number[]) => void)[] = [];
  totalDataPoints = 0n;
  private closed = false;
  /** False between a lost transport and the resume, so that no chunk goes out under a stale alias. */
  private attached = true;
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly ackHandlers: ((r: AckResult[]) => void)[] = [];
  private readonly errorHandlers: ((e: Error) => void)[] = [];
  private ackWaiters: (() => void)[] = [];

  static openRequest(requestId: number, o: UpstreamOptions): iscp2.IUpstreamOpenRequest {
    return {
      requestId,
      sessionId: o.sessionId,
      ackInterval: o.ackIntervalMs ?? 10,
      expiryInterval: expiryOf(o),
      dataIds: o.dataIds ?? [],
      qos: o.qos ?? QoS.RELIABLE,
      extensionFields: { persist: o.persist ?? false },
    };
  }

  constructor(
    private readonly conn: IscpClient,
    private readonly opts: UpstreamOptions,
    r: iscp2.IUpstreamOpenResponse,
  ) {
    this.streamIdBytes = r.assignedStreamId!;
    this.streamId = bytesToUuid(r.assignedStreamId);
    this.alias = r.assignedStreamIdAlias ?? 0;
    this.qos = opts.qos ?? QoS.RELIABLE;
    for (const [a, d] of Object.entries(r.dataIdAliases ?? {}))
      this.aliases.set(keyOf(d.name ?? "", d.type ?? ""), Number(a));
    if (opts.flushIntervalMs) this.flushTimer = setInterval(() => this.flush(), opts.flushIntervalMs);
  }

  /** How long the broker keeps the stream for a resume, s. */
  get expiryIntervalSec(): number {
    return expiryOf(this.opts);
  }

  get lastSequenceNumber(): number {
    return this.seq;
  }

  get unackedCount(): number {
    return this.unacked.size;
  }

  /** Calls `cb` with the results of every ack the broker sends for this stream. */
  onAck(cb: (r: AckResult[]) => void): void {
    this.ackHandlers.push(cb);
  }

  /** @internal the connection hands over an UpstreamChunkAck of this stream. */
  receiveAck(ack: iscp2.IUpstreamChunkAck): void {
    for (const [a, d] of Object.entries(ack.dataIdAliases ?? {}))
      this.aliases.set(keyOf(d.name ?? "", d.type ?? ""), Number(a));
    const results = (ack.results ?? []).map((r) => ({
      sequenceNumber: r.sequenceNumber ?? 0,
      resultCode: r.resultCode ?? 0,
      resultString: r.resultString ?? "",
    }));
    for (const r of results) {
      this.unacked.delete(r.sequenceNumber);
      this.sentAt.delete(r.sequenceNumber);
    }
    for (const h of this.ackHandlers) h(results);
    this.forgetLost();
    if (this.unacked.size === 0) for (const w of this.ackWaiters.splice(0)) w();
  }

  /** UNRELIABLE chunks given up without an ack (lost datagrams); called with their sequence numbers. */
  onLost(cb: (sequenceNumbers: number[]) => void): void {
    this.lostHandlers.push(cb);
  }

  /** Drops UNRELIABLE chunks unacked for longer than lostAfterMs (or beyond the count bound). */
  private forgetLost(now = Date.now()): void {
    if (this.sentAt.size === 0) return;
    const limit = now - (this.opts.lostAfterMs ?? 5000);
    const lost: number[] = [];
    for (const [seq, at] of this.sentAt) {
      if (at > limit && this.sentAt.size - lost.length <= MAX_UNRELIABLE_UNACKED) break;
      lost.push(seq);
    }
    if (lost.length > 0) {
      for (const seq of lost) {
        this.sentAt.delete(seq);
        this.unacked.delete(seq);
      }
      for (const h of this.lostHandlers) h(lost);
    }
    this.watchLost();
  }

  /** Looks again when the oldest unacked chunk's time is up, even if nothing is sent or acked meanwhile. */
  private watchLost(): void {
    if (this.lostTimer !== undefined || this.sentAt.size === 0 || this.closed) return;
    const oldest = this.sentAt.values().next().value as number;
    const wait = Math.max(10, oldest + (this.opts.lostAfterMs ?? 5000) - Date.now() + 1);
    this.lostTimer = setTimeout(() => {
      this.lostTimer = undefined;
      this.forgetLost();
    }, wait);
    this.lostTimer.unref();
  }

  /** The stream could not be resumed (e.g. it expired on the broker). */
  onError(cb: (e: Error) => void): void {
    this.errorHandlers.push(cb);
  }

  write(dataId: { name: string; type: string }, points: DataPointIn[]): void {
    if (this.closed) throw new Error("upstream is closed");
    const k = keyOf(dataId.name, dataId.type);
    let g = this.buffer.get(k);
    if (!g) this.buffer.set(k, (g = { name: dataId.name, type: dataId.type, points: [] }));
    for (const p of points) {
      g.points.push({
        elapsedTime: toLong(typeof p.elapsedTime === "bigint" ? p.elapsedTime : Math.trunc(p.elapsedTime)),
        payload: p.payload,
      });
      this.bufferedBytes += p.payload.length;
    }
    if (this.opts.flushBytes && this.bufferedBytes >= this.opts.flushBytes) this.flush();
  }

  /** Sends the buffered points as one chunk; returns its sequence number (0 when nothing was buffered). */
  flush(): number {
    if (this.buffer.size === 0) return 0;
    const groups = [...this.buffer.values()];
    this.buffer = new Map();
    this.bufferedBytes = 0;
    this.sendChunk(++this.seq, { groups });
    return this.seq;
  }

  /**
   * Sends one stored chunk under a sequence number chosen by the caller (the agent's stored chunk number, so
   * that a later REST upload of the same chunk is recognised as a duplicate). Numbers grow, gaps allowed; a
   * number sent before goes again only when its ack was lost with a connection (the broker acknowledges
   * a number it already has without storing or relaying it twice). The chunk's bytes are read during the
   * call only (RELIABLE keeps a copy until acked, for a resume). Returns false when the chunk could not be handed to the transport (it then waits for a
   * resume, RELIABLE only).
   */
  writeStoredChunk(sequenceNumber: number, chunk: ChunkView): boolean {
    if (this.closed) throw new Error("upstream is closed");
    if (sequenceNumber > this.seq) this.seq = sequenceNumber;
    return this.sendChunk(sequenceNumber, { stored: chunk });
  }

  private readonly aliasOf = (name: string, type: string): number | undefined => this.aliases.get(keyOf(name, type));

  private sendChunk(seq: number, body: ChunkBody): boolean {
    this.totalDataPoints += BigInt(pointsOf(body));
    const unreliable = this.qos === QoS.UNRELIABLE;
    const sent = this.attached && this.transmit(seq, body, unreliable);
    // Every QoS waits for its ack (close() needs it); only RELIABLE chunks survive a lost transport.
    if (this.qos === QoS.RELIABLE)
      this.unacked.set(seq, "stored" in body ? { stored: chunkView(Buffer.from(body.stored.buffer)) } : body);
    else if (sent) this.unacked.set(seq, undefined);
    if (sent && unreliable) {
      const now = Date.now();
      this.sentAt.set(seq, now);
      this.forgetLost(now);
    }
    return sent;
  }

  /** Encodes a chunk under the current stream alias and data-id aliases and hands it to the connection. */
  private transmit(seq: number, body: ChunkBody, unreliable = false): boolean {
    if ("stored" in body && this.conn.transport.encoding === "proto") {
      const { frame } = encodeUpstreamChunkMessage(
        body.stored,
        { streamIdAlias: this.alias, sequenceNumber: seq, aliasOf: this.aliasOf },
        takeSendFrame,
      );
      const sent = this.conn.sendFrame(frame, unreliable, () => frames.give(frame));
      if (!sent) frames.give(frame);
      return sent;
    }
    const groups: iscp2.IDataPointGroup[] = [];
    const ask: iscp2.IDataID[] = [];
    for (const g of "stored" in body ? storedGroups(body.stored) : body.groups) {
      const a = this.aliasOf(g.name, g.type);
      if (a) groups.push({ dataIdAlias: a, dataPoints: g.points });
      else {
        groups.push({ dataId: { name: g.name, type: g.type }, dataPoints: g.points });
        ask.push({ name: g.name, type: g.type });
      }
    }
    const chunk: iscp2.IUpstreamChunk = {
      streamIdAlias: this.alias,
      streamChunk: { sequenceNumber: seq, dataPointGroups: groups },
      dataIds: ask,
    };
    return this.conn.send({ upstreamChunk: chunk }, unreliable);
  }

  /** Resolves when every sent chunk is acked, or after timeoutMs. */
  waitAcked(timeoutMs = 5000): Promise<boolean> {
    if (this.unacked.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.ackWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  async close(o: { closeSession?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.flush();
    await this.waitAcked(this.opts.closeTimeoutMs ?? 5000);
    this.closed = true;
    clearInterval(this.flushTimer);
    clearTimeout(this.lostTimer);
    this.conn.forget(this);
    await this.conn.request(
      (requestId) => ({
        upstreamCloseRequest: {
          requestId,
          streamId: this.streamIdBytes,
          totalDataPoints: toLong(this.totalDataPoints, true),
          finalSequenceNumber: this.seq,
          extensionFields: { closeSession: o.closeSession ?? false },
        },
      }),
      "upstreamCloseResponse",
    );
  }

  /** @internal the transport is gone: non-reliable chunks will never be acked. */
  detached(): void {
    this.attached = false;
    if (this.qos !== QoS.RELIABLE) {
      this.unacked.clear();
      this.sentAt.clear();
      clearTimeout(this.lostTimer);
      this.lostTimer = undefined;
    }
  }

  /** @internal resumed on a new transport, maybe under a new alias. */
  resumed(alias: number): void {
    this.alias = alias;
    this.attached = true;
    for (const [seq, body] of this.unacked) if (body !== undefined && !this.transmit(seq, body)) break;
  }

  /** @internal */
  lost(e: Error): void {
    this.dispose();
    for (const h of this.errorHandlers) h(e);
  }

  /** @internal */
  dispose(): void {
    this.closed = true;
    clearInterval(this.flushTimer);
    clearTimeout(this.lostTimer);
    for (const w of this.ackWaiters.splice(0)) w();
  }
}
