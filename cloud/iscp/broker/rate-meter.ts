// The data rate of one connection over the last few seconds: points and payload bytes counted into
// one-second slots of a small ring, summed over the window when asked. O(1) per chunk, fixed memory.

export const RATE_WINDOW_SECONDS = 5;

export interface DataRate {
  points_per_second: number;
  bytes_per_second: number;
}

export class RateMeter {
  /** Whole seconds (since the epoch) each slot counts, and what it counted. */
  private readonly second = new Float64Array(RATE_WINDOW_SECONDS).fill(-1);
  private readonly points = new Float64Array(RATE_WINDOW_SECONDS);
  private readonly bytes = new Float64Array(RATE_WINDOW_SECONDS);
  private readonly startedMs: number;

  constructor(private readonly now: () => number = Date.now) {
    this.startedMs = now();
  }

  add(points: number, bytes: number): void {
    const s = Math.floor(this.now() / 1000);
    const i = s % RATE_WINDOW_SECONDS;
    if (this.second[i] !== s) (this.second[i] = s), (this.points[i] = 0), (this.bytes[i] = 0);
    this.points[i]! += points;
    this.bytes[i]! += bytes;
  }

  /**
   * Per second over the last RATE_WINDOW_SECONDS (the current, partial second included), or over the
   * connection's age when it is younger, so a fresh connection is not shown slower than it is.
   */
  rate(): DataRate {
    const nowMs = this.now();
    const s = Math.floor(nowMs / 1000);
    let points = 0;
    let bytes = 0;
    for (let i = 0; i < RATE_WINDOW_SECONDS; i++) {
      if (this.second[i]! > s - RATE_WINDOW_SECONDS) (points += this.points[i]!), (bytes += this.bytes[i]!);
    }
    // The window spans the full seconds before this one plus the part of this one gone by.
    const windowS = RATE_WINDOW_SECONDS - 1 + (nowMs % 1000) / 1000;
    const seconds = Math.max(1, Math.min(windowS, (nowMs - this.startedMs) / 1000));
    return { points_per_second: round(points / seconds), bytes_per_second: round(bytes / seconds) };
  }
}

const round = (v: number) => Math.round(v * 10) / 10;
