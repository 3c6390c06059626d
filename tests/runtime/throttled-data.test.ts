// The data path reports bytes moved to its machines at most every 100 ms (summed), the first bytes
// after a quiet spell at once, so a FIFO read every few microseconds is not a machine event each.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { throttledData } from "../../runtime/throttled-data.js";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

it("reports the first bytes at once, then sums the rest per 100 ms, and goes quiet when nothing moves", () => {
  const seen: number[] = [];
  const opened = vi.fn();
  const cb = throttledData({ data: (b: number) => seen.push(b), opened });
  cb.data(10);
  expect(seen).toEqual([10]);
  for (let i = 0; i < 1000; i++) cb.data(1);
  expect(seen).toEqual([10]);
  vi.advanceTimersByTime(100);
  expect(seen).toEqual([10, 1000]);
  vi.advanceTimersByTime(100); // nothing moved: no event, and the next bytes go at once again
  expect(seen).toEqual([10, 1000]);
  cb.data(7);
  expect(seen).toEqual([10, 1000, 7]);
  cb.opened(); // other callbacks pass through unchanged
  expect(opened).toHaveBeenCalledOnce();
});

it("reports nothing after stop()", () => {
  const seen: number[] = [];
  const cb = throttledData({ data: (b: number) => seen.push(b) });
  cb.data(1);
  cb.data(2);
  cb.stop();
  vi.advanceTimersByTime(1000);
  expect(seen).toEqual([1]);
});
