// How much a broker lets wait for its storage commit, shared fairly between connections. A chunk costs its bytes
// plus a fixed amount for the store's work per chunk (a statement, an index entry, an ack), so the budget bounds
// the time the waiting chunks take to commit whether they are many small ones or a few large ones. Every
// connection with chunks waiting gets an equal share of the budget (never less than a floor); a connection past
// its share stops taking chunks in (ConnIntake) until half of them committed. So the backlog stays a fraction of
// a second of commits however many connections send, and a connection that floods waits for its own chunks,
// not the others for its.

export interface StoreBudgetLimits {
  /** Cost of all chunks waiting for their commit, across connections (bytes). */
  maxPendingStoreBytes: number;
  /** A connection's share is never below this (bytes), however many connections share the budget. */
  minPendingStoreBytesPerConn: number;
  /** What a chunk costs on top of its bytes (the store's work per chunk, in bytes of equal time). */
  pendingStoreChunkBytes: number;
}

/** A connection as the budget sees it. */
export interface BudgetMember {
  pendingStoreCost: number;
  overStoreShare: boolean;
  /** Past its share: take nothing more in. */
  storeBehind(): void;
  /** Back under half its share: take in again. */
  storeCaughtUp(): void;
}

export class StoreBudget {
  /** Cost of every chunk waiting for its commit. */
  pending = 0;
  /** Connections with chunks waiting. */
  private active = 0;

  constructor(private readonly limits: StoreBudgetLimits) {}

  /** What a chunk of `bytes` costs. */
  cost(bytes: number): number {
    return bytes + this.limits.pendingStoreChunkBytes;
  }

  /** Each waiting connection's share of the budget. */
  share(): number {
    return Math.max(
      this.limits.minPendingStoreBytesPerConn,
      Math.floor(this.limits.maxPendingStoreBytes / Math.max(1, this.active)),
    );
  }

  started(m: BudgetMember, cost: number): void {
    if (m.pendingStoreCost === 0) this.active++;
    m.pendingStoreCost += cost;
    this.pending += cost;
    if (!m.overStoreShare && m.pendingStoreCost > this.share()) {
      m.overStoreShare = true;
      m.storeBehind();
    }
  }

  settled(m: BudgetMember, cost: number): void {
    m.pendingStoreCost -= cost;
    this.pending -= cost;
    if (m.pendingStoreCost <= 0) {
      m.pendingStoreCost = 0;
      this.active--;
    }
    if (m.overStoreShare && m.pendingStoreCost <= this.share() >> 1) {
      m.overStoreShare = false;
      m.storeCaughtUp();
    }
  }
}
