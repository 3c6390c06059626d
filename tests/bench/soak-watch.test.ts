// The soak's slope window (bench/soak/watch.ts): a life's RSS slope is read after its warm-up and, for a process
// with a bounded cache that fills as data is written (a SQLite cloud's page cache), only once the data written in
// that life could have filled it; a life whose cache never filled gives no slope rather than a flat one. The judged
// slope is Theil-Sen's: a dip of a minute or two (V8 shrinking its young generation) does not tilt it.
import { afterEach, expect, it, vi } from "vitest";
import { slopePerMinute } from "../../bench/steady.js";
import { ProcessWatch, theilSenPerMinute } from "../../bench/soak/watch.js";

const MiB = 2 ** 20;

afterEach(() => void vi.useRealTimers());

/** Samples this process (its RSS and descriptors are real) as roles, every 10 s of a made-up clock. */
function sampleEvery10s(watch: ProcessWatch, roles: string[], n: number, each?: (t: number) => void): void {
  vi.useFakeTimers({ toFake: ["Date"] });
  const t0 = Date.now();
  for (let i = 0; i < n; i++) {
    vi.setSystemTime(t0 + i * 10_000);
    each?.(i * 10);
    watch.sample(Object.fromEntries(roles.map((r) => [r, process.pid])));
  }
}

it("reads a slope from the warm-up on, or from when a filling cache was full if that is later", () => {
  let written = 100 * MiB; // the database file the life started with: not in this life's cache
  const watch = new ProcessWatch({ "cloud-0": { bytes: 64 * MiB, written: () => written } });
  // 16 MiB a sample: the cache is full at the fourth growth, 40 s into the life.
  sampleEvery10s(watch, ["agent", "cloud-0"], 11, (t) => void (written = 100 * MiB + (t / 10) * 16 * MiB));
  const byRole = Object.fromEntries(watch.slopes(20).map((s) => [s.role, s]));
  expect(byRole.agent).toMatchObject({ from_s: 20, span_s: 80, lives: 1 });
  expect(byRole.agent!.rss_MiB_per_h).toEqual(expect.any(Number));
  expect(byRole["cloud-0"]).toMatchObject({ from_s: 40, span_s: 60, lives: 1 });
  expect(byRole["cloud-0"]!.rss_MiB_per_h).toEqual(expect.any(Number));
});

it("gives no slope for a life whose cache never filled", () => {
  let written = 0;
  const watch = new ProcessWatch({ "cloud-0": { bytes: 64 * MiB, written: () => written } });
  sampleEvery10s(watch, ["cloud-0"], 11, (t) => void (written = (t / 10) * MiB)); // 10 MiB of a 64 MiB cache
  expect(watch.slopes(20)).toEqual([
    expect.objectContaining({ role: "cloud-0", from_s: null, span_s: 0, rss_MiB_per_h: null, fd_per_h: null }),
  ]);
});

it("judges a steady growth as growth and a short dip near the window's end as nothing", () => {
  // 40 minutes sampled every 5 s: flat at 100 MiB, with 90 s of 30 MiB less (the young generation shrunk and
  // being used again) 5 minutes before the end; then the same with 2 MiB/h of growth.
  const at = (t: number, perH: number) => 100 + (perH * t) / 3600 - (t >= 2040 && t < 2130 ? 30 : 0);
  const samples = (perH: number) => Array.from({ length: 481 }, (_, i) => [i * 5, at(i * 5, perH)] as const);
  expect(Math.abs(theilSenPerMinute(samples(0)) * 60)).toBeLessThan(0.01);
  expect(slopePerMinute(samples(0)) * 60).toBeLessThan(-1); // the least-squares line calls the dip a fall
  expect(theilSenPerMinute(samples(2)) * 60).toBeCloseTo(2, 1);
  expect(theilSenPerMinute([[0, 1]])).toBeNaN();
});
