// The broker's per-connection data rate: points and payload bytes per second over the last seconds.
import { describe, expect, it } from "vitest";
import { RATE_WINDOW_SECONDS, RateMeter } from "../../../cloud/iscp/broker/rate-meter.js";

describe("RateMeter", () => {
  it("averages over the window, or over the connection's age while it is younger", () => {
    let now = 1_000_000_000;
    const m = new RateMeter(() => now);
    expect(m.rate()).toEqual({ points_per_second: 0, bytes_per_second: 0 });
    now += 500;
    m.add(100, 800); // half a second in: counted over at least one second
    expect(m.rate()).toEqual({ points_per_second: 100, bytes_per_second: 800 });
    for (let i = 0; i < 20; i++) {
      now += 1000;
      m.add(100, 800);
    }
    // A steady 100 points/s: the full window holds (window - 1) whole seconds plus the current half one.
    const r = m.rate();
    expect(r.points_per_second).toBeGreaterThan(95);
    expect(r.points_per_second).toBeLessThanOrEqual((100 * RATE_WINDOW_SECONDS) / (RATE_WINDOW_SECONDS - 0.5) + 0.1);
    expect(r.bytes_per_second).toBeCloseTo(r.points_per_second * 8, 0);
  });

  it("falls to zero once nothing arrived for a whole window, and reuses its slots", () => {
    let now = 5_000_000_000;
    const m = new RateMeter(() => now);
    now += 3000;
    m.add(300, 300);
    expect(m.rate().points_per_second).toBe(100);
    now += RATE_WINDOW_SECONDS * 1000;
    expect(m.rate()).toEqual({ points_per_second: 0, bytes_per_second: 0 });
    m.add(50, 5); // lands in a slot an old second used: the old count is not added
    expect(m.rate().points_per_second).toBeLessThanOrEqual(50 / (RATE_WINDOW_SECONDS - 1) + 0.1);
  });
});
