// The hand-over of a received chunk to storage (the onUpstreamChunk hook) and of its result to the ack. This
// runs for every chunk, so it keeps to one call of the hook and one reaction to its promise, with the groups
// as small class instances (no closure or accessor object per group); the points are decoded only when the
// store asks for them (it copies the received bytes when there are).
import { iscp2, ResultCode } from "../../../proto/wire/message.js";
import { toBigInt } from "../../../proto/wire/long.js";
import { RawPointGroup } from "../../../proto/wire/chunk-scan.js";
import type { ServerConn } from "./conn.js";
import type { RelayGroup } from "./downstream.js";
import type { ChunkDataPoint, ChunkGroup, HookResult, IscpHooks } from "./options.js";
import type { DataIdRef, UpstreamStream } from "./upstream.js";
import type { HeldTurn } from "./intake.js";

export interface StoreResult {
  code: iscp2.ResultCode;
  str: string;
}
/** What waits for a chunk whose store is running: acks of its duplicates. */
export type StoreWaiters = Array<(r: StoreResult) => void>;

const STORED: StoreResult = { code: ResultCode.SUCCEEDED, str: "OK" };
const NO_WAITERS: StoreWaiters = [];

function resultOf(r: HookResult): StoreResult {
  return r && r.resultCode !== ResultCode.SUCCEEDED ? { code: r.resultCode, str: r.resultString ?? "refused" } : STORED;
}
function failureOf(e: unknown): StoreResult {
  return { code: ResultCode.PROCESS_FAILED, str: e instanceof Error ? e.message : "hook failed" };
}

/** One group of a received chunk, as relayed: points decoded only when a downstream takes them. */
export class ReceivedGroup implements RelayGroup {
  readonly bytes: number;
  readonly raw: RawPointGroup | undefined;
  constructor(
    readonly ref: DataIdRef,
    private readonly g: { count: number; payloadBytes: number; readonly dataPoints: iscp2.IDataPoint[] },
  ) {
    this.bytes = 16 + g.payloadBytes + 12 * g.count;
    this.raw = g instanceof RawPointGroup ? g : undefined;
  }

  get points(): iscp2.IDataPoint[] {
    return this.g.dataPoints;
  }
}

/** What the storage hook sees of a group: the received bytes when there are, points only when asked. */
class StoredGroup implements ChunkGroup {
  readonly dataId: { name: string; type: string };
  readonly raw: RawPointGroup | undefined;
  private decoded: ChunkDataPoint[] | undefined;
  constructor(private readonly g: RelayGroup) {
    this.dataId = { name: g.ref.name, type: g.ref.type };
    this.raw = g.raw;
  }

  get dataPoints(): ChunkDataPoint[] {
    this.decoded ??= this.g.points.map((p) => ({
      elapsedTime: toBigInt(p.elapsedTime),
      payload: p.payload ?? new Uint8Array(0),
    }));
    return this.decoded;
  }
}

/** Runs the storage hook for one chunk; its ack goes out when the hook settles. */
function storeChunk(
  c: ServerConn,
  u: UpstreamStream,
  seq: number,
  groups: RelayGroup[],
  hook: NonNullable<IscpHooks["onUpstreamChunk"]>,
): void {
  const stored: StoredGroup[] = new Array(groups.length);
  let bytes = 0;
  for (let i = 0; i < groups.length; i++) {
    stored[i] = new StoredGroup(groups[i]!);
    bytes += groups[i]!.bytes;
  }
  const budget = c.hub.storeBudget;
  const cost = budget.cost(bytes);
  u.inFlight++;
  budget.started(c, cost);
  u.storing.set(seq, NO_WAITERS);
  const settle = (r: StoreResult) => {
    u.inFlight--;
    budget.settled(c, cost);
    const waiters = u.storing.get(seq);
    u.storing.delete(seq);
    if (r.code !== ResultCode.SUCCEEDED) u.storeFailed(seq);
    u.addResult(seq, r.code, r.str);
    if (waiters) for (const w of waiters) w(r);
  };
  let r: HookResult | Promise<HookResult>;
  try {
    r = hook(u.info, { sequenceNumber: seq, dataPointGroups: stored });
  } catch (e) {
    return void Promise.resolve().then(() => settle(failureOf(e)));
  }
  // Settled in a later turn either way, as the chunk's other work (relay, budget) is done by then.
  Promise.resolve(r).then(
    (v) => settle(resultOf(v)),
    (e: unknown) => settle(failureOf(e)),
  );
}

/** A duplicate of a chunk whose store is running is acked with the store's result; false when none runs. */
function ackWithRunningStore(u: UpstreamStream, seq: number): boolean {
  const waiters = u.storing.get(seq);
  if (!waiters) return false;
  const add = (r: StoreResult) => u.addResult(seq, r.code, r.str);
  if (waiters === NO_WAITERS) u.storing.set(seq, [add]);
  else waiters.push(add);
  return true;
}

/** A new chunk (relayed already): stored, and acked once stored; acked at once when nothing stores chunks. */
export function storeNew(c: ServerConn, u: UpstreamStream, seq: number, groups: RelayGroup[]): void {
  const hook = c.hub.hooks.onUpstreamChunk;
  if (!hook) return u.addResult(seq, ResultCode.SUCCEEDED, "OK");
  storeChunk(c, u, seq, groups, hook);
}

/**
 * A duplicate's ack says no more than the original's storage did: it waits for a store still running, and a store
 * that failed is tried again with this copy.
 */
export function ackDuplicate(c: ServerConn, u: UpstreamStream, seq: number, groups: RelayGroup[]): void {
  if (ackWithRunningStore(u, seq)) return;
  const hook = c.hub.hooks.onUpstreamChunk;
  if (hook && u.storeAgain(seq)) return storeChunk(c, u, seq, groups, hook);
  u.addResult(seq, ResultCode.SUCCEEDED, "OK");
}

/** A new chunk received and relayed ahead of its turn (intake.ts): stored in its turn. */
export class StoreTurn implements HeldTurn {
  constructor(
    private readonly c: ServerConn,
    private readonly u: UpstreamStream,
    private readonly seq: number,
    private readonly groups: RelayGroup[],
  ) {}
  run(): void {
    storeNew(this.c, this.u, this.seq, this.groups);
  }
  /**
   * The connection is gone before its turn: the chunk is neither stored nor acked, and it counts as received (a
   * re-sent copy is a duplicate, not relayed again), so the copy the client sends again must be stored.
   */
  drop(): void {
    this.u.storeFailed(this.seq);
  }
}
