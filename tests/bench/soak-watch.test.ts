// The soak's slope window (bench/soak/watch.ts): a life's RSS slope is read after its warm-up and, for a process
// with a bounded cache that fills as data is written (a SQLite cloud's page cache), only once the data written in
// that life could have filled it; a life whose cache never filled gives no slope rather than a flat one.
import { afterEach, expect, it, vi } from "vitest";
import { ProcessWatch } from "../../bench/soak/watch.js";

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
