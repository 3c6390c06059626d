// Back-off of password sign-ins, as Keycloak's brute-force detection with temporary lock-out: failures are counted
// per user name (known or not, so the answers never tell which names exist) and per client address. Past a number
// of free failures every further attempt waits, the wait doubling up to a cap; attempts made while waiting
// are refused before the password is checked and are not counted. A success clears its name's count (never the
// address's: one valid account must not reset a guesser's address), and a count nobody added to for the quiet
// period is forgotten. Counts live in memory; with --nats every peer hears every failure (docs/security.md).

export interface BackOffRule {
  /** Failures before the first wait. */
  freeFailures: number;
  /** The wait after the last free failure; it doubles with each further one. */
  firstWaitMs: number;
  maxWaitMs: number;
  /** A count untouched this long is forgotten. */
  quietMs: number;
}

/** Entries kept at most; past it, those not waiting go first, then the oldest. */
const MAX_ENTRIES = 100_000;

export class BackOff {
  private readonly entries = new Map<string, { failures: number; last: number }>();

  constructor(private readonly rule: BackOffRule) {}

  /** Milliseconds `key` must still wait before its next attempt (0: it may try now). */
  waitMs(key: string, now = Date.now()): number {
    const e = this.current(key, now);
    if (!e || e.failures < this.rule.freeFailures) return 0;
    const wait = Math.min(
      this.rule.maxWaitMs,
      this.rule.firstWaitMs * 2 ** Math.min(30, e.failures - this.rule.freeFailures),
    );
    return Math.max(0, e.last + wait - now);
  }

  failed(key: string, now = Date.now()): void {
    const failures = (this.current(key, now)?.failures ?? 0) + 1;
    this.entries.delete(key);
    this.entries.set(key, { failures, last: now });
    if (this.entries.size > MAX_ENTRIES) this.prune(now);
  }

  clear(key: string): void {
    this.entries.delete(key);
  }

  private current(key: string, now: number) {
    const e = this.entries.get(key);
    if (e && now - e.last >= this.rule.quietMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  private prune(now: number): void {
    for (const key of this.entries.keys()) if (this.waitMs(key, now) === 0) this.entries.delete(key);
    for (const key of this.entries.keys()) {
      if (this.entries.size <= MAX_ENTRIES) break;
      this.entries.delete(key);
    }
  }
}

/** The two back-offs a sign-in passes: its user name's and its client address's. */
export class SignInBackOff {
  readonly byName: BackOff;
  readonly byAddress: BackOff;

  constructor(
    rules: { name: BackOffRule; address: BackOffRule },
    /** Tells the other peers (cluster notice) of a failure or a cleared name. */
    private readonly tell: (event: { of: "name" | "address"; key: string; cleared?: true }) => void = () => {},
  ) {
    this.byName = new BackOff(rules.name);
    this.byAddress = new BackOff(rules.address);
  }

  /** Milliseconds to wait before this attempt may be checked (0: check it now). */
  waitMs(name: string, address: string | undefined, now = Date.now()): number {
    return Math.max(
      this.byName.waitMs(name.toLowerCase(), now),
      address === undefined ? 0 : this.byAddress.waitMs(address, now),
    );
  }

  failed(name: string, address: string | undefined): void {
    this.byName.failed(name.toLowerCase());
    this.tell({ of: "name", key: name.toLowerCase() });
    if (address === undefined) return;
    this.byAddress.failed(address);
    this.tell({ of: "address", key: address });
  }

  succeeded(name: string): void {
    this.byName.clear(name.toLowerCase());
    this.tell({ of: "name", key: name.toLowerCase(), cleared: true });
  }

  /** What another peer told. */
  heard(event: { of?: unknown; key?: unknown; cleared?: unknown }): void {
    if (typeof event.key !== "string" || (event.of !== "name" && event.of !== "address")) return;
    const backOff = event.of === "name" ? this.byName : this.byAddress;
    if (event.cleared === true) backOff.clear(event.key);
    else backOff.failed(event.key);
  }
}
