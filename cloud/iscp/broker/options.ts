// Broker options: pluggable authentication, storage hooks and the protocol limits.
import type { RawPointGroup } from "../../../proto/wire/chunk-scan.js";
import type { iscp2 } from "../../../proto/wire/message.js";
import type { StoreBudgetLimits } from "./store-budget.js";

export type Subject = { kind: "user" | "edge"; uuid: string };

export type AuthResult =
  | {
      ok: true;
      subject: Subject /** Message kinds (e.g. "upstreamOpenRequest") this subject may send; all when absent. */;
      allowedMessages?: Set<string>;
    }
  | { ok: false; resultCode: iscp2.ResultCode; resultString?: string };

export type Authenticate = (accessToken: string, projectUuid: string, nodeId: string) => Promise<AuthResult>;

/** What a storage hook learns about the upstream a chunk or metadata came from. */
export interface UpstreamInfo {
  streamId: string;
  sessionId: string;
  projectUuid: string;
  nodeId: string;
  subject: Subject;
  qos: iscp2.QoS;
  persist: boolean;
}

export interface ChunkDataPoint {
  elapsedTime: bigint;
  payload: Uint8Array;
}
export interface ChunkGroup {
  dataId: { name: string; type: string };
  readonly dataPoints: ChunkDataPoint[];
  /** The group's DataPoint entries as received (enc=proto): storage copies them without decoding each point. */
  raw?: RawPointGroup;
}
export interface UpstreamChunkData {
  sequenceNumber: number;
  dataPointGroups: ChunkGroup[];
}

export interface MetadataInfo {
  projectUuid: string;
  nodeId: string;
  subject: Subject;
  persist: boolean;
}
export interface BaseTimeData {
  sessionId: string;
  name: string;
  priority: number;
  elapsedTime: bigint;
  baseTime: bigint;
}

export interface UpstreamCloseData {
  totalDataPoints: bigint;
  finalSequenceNumber: number;
  closeSession: boolean /** false when the stream expired without a close request */;
  normal: boolean;
}

/** A hook may refuse with an iSCP result code (e.g. SESSION_NOT_FOUND); throwing means PROCESS_FAILED. */
export type HookResult = void | { resultCode: iscp2.ResultCode; resultString?: string };

/** What a peer keeps of an upstream so that another peer sharing its database can resume it. */
export interface UpstreamSnapshot {
  info: UpstreamInfo;
  ackIntervalMs: number;
  expiryMs: number;
  /** The stream alias it had on its connection (iscp-ts keeps using it after a resume). */
  streamAlias: number;
  aliases: Array<{ alias: number; name: string; type: string }>;
}

/**
 * Shared upstream state (cloud/iscp/service/upstream-states.ts): written at open, at each new data-id alias
 * and at the end, never per chunk. Chunks re-sent after a takeover are told apart by the storage hook
 * (a sequence number already stored is acknowledged, not stored again).
 */
export interface UpstreamStates {
  opened(s: UpstreamSnapshot): Promise<void>;
  aliasAdded(streamId: string, alias: { alias: number; name: string; type: string }): Promise<void>;
  /** Closed or expired: no peer may resume it any more. */
  removed(streamId: string): Promise<void>;
  /** Takes over a stream that a gone (or releasing) peer held, if `mine`; undefined when there is none to take. */
  takeOver(streamId: string, mine: (info: UpstreamInfo) => boolean): Promise<UpstreamSnapshot | undefined>;
}

export interface IscpHooks {
  /** Upstreams resumable on other peers; absent: only on this broker, from memory. */
  upstreamStates?: UpstreamStates;
  /** Before an upstream open is accepted. */
  onUpstreamOpen?(info: UpstreamInfo): HookResult | Promise<HookResult>;
  /** Every new (non-duplicate) chunk of every upstream; the chunk is acked when this settles. */
  onUpstreamChunk?(info: UpstreamInfo, chunk: UpstreamChunkData): HookResult | Promise<HookResult>;
  /** Every base time; UpstreamMetadataAck waits for it. */
  onUpstreamMetadata?(info: MetadataInfo, baseTime: BaseTimeData): HookResult | Promise<HookResult>;
  /**
   * The highest sequence numbers (at most `limit`) already stored for an upstream taken over from another
   * instance: chunks re-sent with them are acknowledged without being stored or relayed again.
   */
  storedSequenceNumbers?(info: UpstreamInfo, limit: number): Promise<number[]>;
  /** A closed or expired upstream. */
  onUpstreamClose?(info: UpstreamInfo, close: UpstreamCloseData): void | Promise<void>;
}

export interface IscpLimits extends StoreBudgetLimits {
  /** Streams each connection may have open, per direction (TOO_MANY_STREAMS). */
  maxUpstreamsPerConn: number;
  maxDownstreamsPerConn: number;
  /** Data-ID aliases per upstream; data-ID and upstream aliases a downstream may declare, per table (TOO_MANY_DATA_ID_ALIASES). */
  maxDataIdAliases: number;
  /** UpstreamOpenRequest.ack_interval ceiling, ms (TOO_LONG_ACK_INTERVAL). */
  maxAckIntervalMs: number;
  /** expiry_interval ceiling, s (TOO_LONG_EXPIRY_INTERVAL). */
  maxExpiryIntervalSec: number;
  /** Streams are kept at least this long after their transport is lost (iscp-ts notices a dead socket after ~11 s). */
  expiryGraceFloorSec: number;
  maxDownstreamFilters: number;
  maxDataFiltersPerFilter: number;
  /** ConnectRequest ping bounds, s. */
  minPingIntervalSec: number;
  minPingTimeoutSec: number;
  maxPingTimeoutSec: number;
  /** The broker waits at least this long for a Pong to its own Ping, s. */
  serverPingTimeoutFloorSec: number;
  /** Largest message accepted from a client (TOO_LARGE_MESSAGE_SIZE). */
  maxIncomingMessageBytes: number;
  /** Largest frame sent to a client; iscp-ts on Node 20 drops the connection above 1 MiB. */
  maxOutgoingFrameBytes: number;
  /** Time allowed between the socket opening and the ConnectRequest (CONNECT_TIMEOUT). */
  connectTimeoutMs: number;
  /** Per-downstream relay buffer; the oldest queued chunks are dropped beyond it. */
  downstreamQueueBytes: number;
  downstreamQueueChunks: number;
  /** RELIABLE downstreams keep at most this many sent-but-unacked chunks for re-sending after a resume. */
  reliableUnackedChunks: number;
  /** A connection stops pulling relay data while its transport holds more than this. */
  transportHighWaterBytes: number;
  /**
   * Messages read from a connection while storage is behind on it, held until it catches up (bytes, plus a fixed
   * overhead per message): the broker keeps reading so that Pings and Pongs are answered meanwhile, and stops
   * reading only past this bound.
   */
  maxHeldBytesPerConn: number;
  /**
   * Messages a client sends after its ConnectRequest, kept until the token check answers (bytes, plus a
   * fixed overhead per message). The broker stops reading the connection meanwhile, so only what was read
   * already lands here; beyond it the client is disconnected (RATE_LIMIT_REACHED).
   */
  maxConnectBacklogBytes: number;
}

export const DEFAULT_LIMITS: IscpLimits = {
  maxUpstreamsPerConn: 256,
  maxDownstreamsPerConn: 256,
  maxDataIdAliases: 65_536,
  maxAckIntervalMs: 60_000,
  maxExpiryIntervalSec: 86_400,
  expiryGraceFloorSec: 30,
  maxDownstreamFilters: 256,
  maxDataFiltersPerFilter: 1024,
  minPingIntervalSec: 1,
  minPingTimeoutSec: 1,
  maxPingTimeoutSec: 600,
  serverPingTimeoutFloorSec: 3,
  maxIncomingMessageBytes: 4 * 1024 * 1024,
  maxOutgoingFrameBytes: 1024 * 1024,
  connectTimeoutMs: 10_000,
  downstreamQueueBytes: 8 * 1024 * 1024,
  downstreamQueueChunks: 10_000,
  reliableUnackedChunks: 10_000,
  transportHighWaterBytes: 1024 * 1024,
  // Persisted chunks waiting for their commit (store-budget.ts): a chunk counts its bytes plus 1 KiB, about what
  // the store's work per chunk takes in time at its rate per byte, so 16 MiB is a fraction of a second of commits
  // whether the chunks are one-point ones or large; at least 8 KiB (a few small chunks) per connection.
  maxPendingStoreBytes: 16 * 1024 * 1024,
  minPendingStoreBytesPerConn: 8 * 1024,
  pendingStoreChunkBytes: 1024,
  maxHeldBytesPerConn: 512 * 1024,
  maxConnectBacklogBytes: 8 * 1024 * 1024,
};

export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {} };

export interface IscpBrokerOptions extends IscpHooks {
  authenticate: Authenticate;
  limits?: Partial<IscpLimits>;
  logger?: Logger;
}
