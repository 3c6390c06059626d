// The fleet benches' schedule (bench/edges-schedule.ts): a point is sent at the first flush after it is due, not
// one interval later, so a latency from its due time is what the system adds (plus at most one flush).
import { describe, expect, it } from "vitest";
import { pointsDue } from "../../bench/edges-schedule.js";

const MS = 1e6;

describe("bench: an edge's schedule", () => {
  it("makes point k due once k / rate has passed, point 0 at the start", () => {
    expect(pointsDue(-1, 20)).toBe(0);
    expect(pointsDue(0, 20)).toBe(1);
    expect(pointsDue(49.9 * MS, 20)).toBe(1);
    expect(pointsDue(50 * MS, 20)).toBe(2);
    expect(pointsDue(1000 * MS, 20)).toBe(21);
    expect(pointsDue(5 * MS, 1000)).toBe(6);
  });
});
