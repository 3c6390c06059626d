// Sign-in attempts per client address and per user name, in fixed one-minute windows. This slows
// password guessing on the page; the account lock-out (accounts area) stops it for one account.
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  /** `onTaken` tells the other peers (cluster notice), so a limit holds across peers, not per peer. */
  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
    private readonly onTaken: (key: string) => void = () => {},
  ) {}

  /** Counts one attempt; false when the key is over its limit in the current window. */
  take(key: string, now = Date.now()): boolean {
    this.onTaken(key);
    return this.count(key, now);
  }

  /** Counts one attempt (made here, or on another peer), and says whether the key is within its limit. */
  count(key: string, now = Date.now()): boolean {
    const w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      if (this.windows.size > 50_000) this.windows.clear();
      this.windows.set(key, { start: now, count: 1 });
      return true;
    }
    w.count++;
    return w.count <= this.limit;
  }
}
