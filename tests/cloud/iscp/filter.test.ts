// Data filter wildcards and the duplicate-detection window.
import { describe, expect, it } from "vitest";
import { compilePattern, DataIdMatcher, matchPattern } from "../../../cloud/iscp/broker/filter.js";
import { SeqWindow } from "../../../cloud/iscp/broker/upstream.js";

const m = (p: string, v: string) => matchPattern(compilePattern(p)!, v);

describe("data filters", () => {
  it("matches MQTT-like wildcards on / levels", () => {
    expect(m("#", "a/b/c")).toBe(true);
    expect(m("a/#", "a")).toBe(true);
    expect(m("a/#", "a/b/c")).toBe(true);
    expect(m("a/#", "b/a")).toBe(false);
    expect(m("a/+/c", "a/x/c")).toBe(true);
    expect(m("a/+/c", "a/x/d")).toBe(false);
    expect(m("a/+/c", "a/c")).toBe(false);
    expect(m("+", "a")).toBe(true);
    expect(m("+", "a/b")).toBe(false);
    expect(m("a/b", "a/b")).toBe(true);
    expect(m("a/b", "a/b/c")).toBe(false);
    expect(m("a", "a/b")).toBe(false);
  });

  it("rejects misplaced wildcards and empty patterns", () => {
    for (const p of ["", "a/#/b", "a#", "a+/b", "#/a"]) expect(compilePattern(p), p).toBeUndefined();
  });

  it("matches name and type together, any filter", () => {
    const x = new DataIdMatcher([
      { name: compilePattern("can/+")!, type: compilePattern("#")! },
      { name: compilePattern("gps")!, type: compilePattern("nmea")! },
    ]);
    expect(x.matches("can/1", "frame")).toBe(true);
    expect(x.matches("gps", "nmea")).toBe(true);
    expect(x.matches("gps", "other")).toBe(false);
    expect(x.matches("can/1/2", "frame")).toBe(false);
  });
});

describe("sequence window", () => {
  it("detects duplicates, also with gaps, and stays bounded", () => {
    const w = new SeqWindow(8);
    expect([1, 2, 3, 2, 6, 7, 6, 1].map((s) => w.add(s))).toEqual([true, true, true, false, true, true, false, false]);
    for (let s = 10; s < 40; s += 2) expect(w.add(s)).toBe(true); // sparse: the floor moves up
    expect(w.add(38)).toBe(false);
    expect(w.add(4)).toBe(false); // below the floor: presumed lost, not relayed late
    // A gap filled late, then numbers in order again: each once.
    const v = new SeqWindow(8);
    expect([1, 2, 4, 3, 5, 5, 4, 7, 6, 8, 8].map((s) => v.add(s))).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      true,
      true,
      true,
      false,
    ]);
  });
});
