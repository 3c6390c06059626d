// Server-side state of one upstream: its data-ID aliases, duplicate detection and batched acks.
// The stream outlives its connection for the expiry interval so that it can be resumed.
import { iscp2 } from "../../../proto/wire/message.js";
import type { UpstreamInfo } from "./options.js";
import type { StoreWaiters } from "./chunk-store.js";

export interface DataIdRef {
  name: string;
  type: string;
  key: string;
}

/**
 * Size bounds of one ack entry in the larger of the two encodings (canonical JSON), so that an ack
 * split by these never exceeds the client's frame limit: `{"sequenceNumber":4294967295,
 * "resultCode":"SESSION_CANNOT_CLOSED","resultString":…},` and `"4294967295":{"name":…,"type":…},`.
 */
const RESULT_BYTES = 80;
const ALIAS_BYTES = 40;
/** Room for the envelope and the other fields of an ack or open response. */
const ENVELOPE_BYTES = 512;
const jsonBytes = (s: string) => (s === "OK" ? 4 : Buffer.byteLength(JSON.stringify(s)));
const aliasBytes = (d: { name: string; type: string }) => ALIAS_BYTES + jsonBytes(d.name) + jsonBytes(d.type);
const NO_ALIASES: ReadonlyArray<[number, iscp2.IDataID]> = [];

export function dataIdKey(name: string, type: string): string {
  return `${type}\u0000${name}`;
}

/** Remembers which sequence numbers arrived; bounded even when the client skips numbers. */
export class SeqWindow {
  private floor = 0;
  private readonly seen = new Set<number>();
  constructor(private readonly maxSparse = 4096) {}

  /** True the first time a sequence number is added. */
  add(seq: number): boolean {
    // In order, nothing missing: the set stays empty (adding and deleting an entry per chunk reallocates its table).
    if (seq === this.floor + 1 && this.seen.size === 0) {
      this.floor = seq;
      return true;
    }
    if (seq <= this.floor || this.seen.has(seq)) return false;
    this.seen.add(seq);
    if (this.seen.size > this.maxSparse) {
      // Numbers below the oldest one still missing are assumed lost for good (iscp-ts never re-sends).
      let min = Infinity;
      for (const s of this.seen) if (s < min) min = s;
      this.floor = min - 1;
    }
    while (this.seen.delete(this.floor + 1)) this.floor++;
    return true;
  }
}

/** The connection an attached stream sends through. */
export interface StreamOwner {
  sendMessage(msg: iscp2.IMessage): void;
  sendAck(ack: iscp2.IUpstreamChunkAck, hasAliases: boolean): void;
  /** Sends this stream's ack in the connection's next write (ack_interval 0). */
  ackSoon(u: UpstreamStream): void;
}

export class UpstreamStream {
  owner: StreamOwner | null = null;
  alias = 0;
  expiryTimer: NodeJS.Timeout | undefined;
  readonly seqs = new SeqWindow();
  /** Points received (a number per chunk: no BigInt on the hot path). */
  private points = 0;
  lastSequenceNumber = 0;
  private readonly byAlias = new Map<number, DataIdRef>();
  private readonly byKey = new Map<string, number>();
  private nextAlias = 1;
  private pendingResults: iscp2.IUpstreamChunkResult[] = [];
  private pendingAliases = new Map<number, iscp2.IDataID>();
  private ackTimer: NodeJS.Timeout | undefined;
  /** Handed to the owner's next write (ack_interval 0). */
  private ackQueued = false;
  /** Hook calls still running; close waits for them so acks are not lost. */
  inFlight = 0;
  /** Chunks whose storage hook is running, by sequence number (a duplicate waits for its result). */
  readonly storing = new Map<number, StoreWaiters>();
  /** Recent chunks whose storage hook failed: a re-sent copy is stored instead of merely acked. */
  readonly failedStores = new Set<number>();
  /**
   * More failures than failedStores keeps (a long database outage): from then on every re-sent copy is stored
   * again, as one forgotten failure acked without storing would lose the chunk (storing twice skips).
   */
  failuresForgotten = false;

  storeFailed(seq: number): void {
    this.failedStores.add(seq);
    if (this.failedStores.size > 4096) {
      this.failedStores.delete(this.failedStores.values().next().value!);
      this.failuresForgotten = true;
    }
  }

  /** Whether a re-sent copy of `seq` (not being stored now) must be stored: its storage failed, or may have. */
  storeAgain(seq: number): boolean {
    return this.failedStores.delete(seq) || this.failuresForgotten;
  }

  constructor(
    readonly id: string,
    readonly idBytes: Uint8Array,
    readonly info: UpstreamInfo,
    readonly ackIntervalMs: number,
    readonly expiryMs: number,
    private readonly maxAliases: number,
    /** Largest frame the client takes; acks and the open response are split or trimmed to fit. */
    private readonly maxFrameBytes = 1024 * 1024,
  ) {}

  get totalDataPoints(): bigint {
    return BigInt(this.points);
  }

  addPoints(n: number): void {
    this.points += n;
  }

  get aliasCount(): number {
    return this.byAlias.size;
  }

  resolveAlias(alias: number): DataIdRef | undefined {
    return this.byAlias.get(alias);
  }

  /** The DataID's alias entry when it has one, else a fresh reference (no alias is assigned). */
  refFor(name: string, type: string): DataIdRef {
    const key = dataIdKey(name, type);
    const a = this.byKey.get(key);
    return (a !== undefined && this.byAlias.get(a)) || { name, type, key };
  }

  /** Assigns the next alias to a DataID unless it has one or the table is full; returns it or 0. */
  assignAlias(name: string, type: string): number {
    const key = dataIdKey(name, type);
    const have = this.byKey.get(key);
    if (have !== undefined) return have;
    if (this.byAlias.size >= this.maxAliases) return 0;
    const alias = this.nextAlias++;
    this.byAlias.set(alias, { name, type, key });
    this.byKey.set(key, alias);
    return alias;
  }

  /** Aliases as another peer assigned them (a stream taken over): the next one assigned comes after them. */
  restoreAliases(aliases: ReadonlyArray<{ alias: number; name: string; type: string }>): void {
    for (const { alias, name, type } of aliases) {
      const key = dataIdKey(name, type);
      this.byAlias.set(alias, { name, type, key });
      this.byKey.set(key, alias);
      if (alias >= this.nextAlias) this.nextAlias = alias + 1;
    }
  }

  /** Every alias, for the shared state (upstream-states.ts). */
  aliasList(): Array<{ alias: number; name: string; type: string }> {
    return [...this.byAlias].map(([alias, d]) => ({ alias, name: d.name, type: d.type }));
  }

  /**
   * Aliases assigned at open go in the open response, as many as fit in one frame; the rest are
   * announced in the next acks (clients merge ack aliases into the same table).
   */
  aliasTable(): Record<number, iscp2.IDataID> {
    const out: Record<number, iscp2.IDataID> = {};
    let used = 0;
    const budget = this.maxFrameBytes - ENVELOPE_BYTES;
    for (const [a, d] of this.byAlias) {
      used += aliasBytes(d);
      if (used <= budget) out[a] = { name: d.name, type: d.type };
      else this.announceAlias(a);
    }
    return out;
  }

  announceAlias(alias: number): void {
    const d = this.byAlias.get(alias);
    if (d) this.pendingAliases.set(alias, { name: d.name, type: d.type });
  }

  /** Queues one chunk result; the ack goes out within ack_interval, batched with others. */
  addResult(sequenceNumber: number, resultCode: iscp2.ResultCode, resultString: string): void {
    this.pendingResults.push({ sequenceNumber, resultCode, resultString });
    this.scheduleAck();
  }

  scheduleAck(): void {
    if (this.ackTimer || this.ackQueued || !this.owner) return;
    if (this.pendingResults.length === 0 && this.pendingAliases.size === 0) return;
    if (this.ackIntervalMs > 0) this.ackTimer = setTimeout(() => this.flushAck(), this.ackIntervalMs);
    else {
      this.ackQueued = true;
      this.owner.ackSoon(this);
    }
  }

  flushAck(): void {
    clearTimeout(this.ackTimer);
    this.ackTimer = undefined;
    this.ackQueued = false;
    if (!this.owner) return; // kept until a resume re-attaches the stream
    if (this.pendingResults.length === 0 && this.pendingAliases.size === 0) return;
    const results = this.pendingResults;
    this.pendingResults = [];
    // Most acks carry no new alias: no copy and no new map for them (an ack per chunk at fleet loads).
    let aliases: ReadonlyArray<[number, iscp2.IDataID]> = NO_ALIASES;
    if (this.pendingAliases.size > 0) {
      aliases = [...this.pendingAliases];
      this.pendingAliases = new Map();
    }
    // One interval's results and new aliases may exceed a frame: they go out in as many acks as needed.
    const budget = this.maxFrameBytes - ENVELOPE_BYTES;
    let ack: iscp2.IUpstreamChunkAck = { streamIdAlias: this.alias, results: [], dataIdAliases: {} };
    let used = 0;
    let hasAliases = false;
    const add = (bytes: number) => {
      if (used > 0 && used + bytes > budget) {
        this.owner!.sendAck(ack, hasAliases);
        hasAliases = false;
        ack = { streamIdAlias: this.alias, results: [], dataIdAliases: {} };
        used = 0;
      }
      used += bytes;
    };
    for (const r of results) {
      add(RESULT_BYTES + jsonBytes(r.resultString ?? ""));
      ack.results!.push(r);
    }
    for (const [a, d] of aliases) {
      add(aliasBytes({ name: d.name ?? "", type: d.type ?? "" }));
      ack.dataIdAliases![a] = d;
      hasAliases = true;
    }
    this.owner.sendAck(ack, hasAliases);
  }

  detach(): void {
    clearTimeout(this.ackTimer);
    this.ackTimer = undefined;
    this.ackQueued = false;
    this.owner = null;
  }

  dispose(): void {
    this.detach();
    clearTimeout(this.expiryTimer);
  }
}
